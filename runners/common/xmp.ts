import type { DocumentInfo } from './document-info-schema.js'

/** A PDF/A level as the API names it. */
export type PdfaLevel = 'PDF/A-1b' | 'PDF/A-2b' | 'PDF/A-3b'

/** The part of ISO 19005 a level is (1, 2 or 3; conformance b). */
export function pdfaPart(level: PdfaLevel): 1 | 2 | 3 {
  return Number(level.charAt(6)) as 1 | 2 | 3
}

/** A PDF date ("D:20261129101500Z", "D:20261129101500+01'00'") as XMP writes it, or undefined when it is not one. */
export function xmpDate(pdfDate: string): string | undefined {
  const m = /^D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(Z|[+-]\d{2}'?\d{2}'?)?/.exec(pdfDate)
  if (!m) return undefined
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', zone] = m
  const tz = !zone || zone === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(3).replace(/'/g, '').padEnd(2, '0')}`
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${tz}`
}

const escapeXml = (text: string) =>
  text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!)

/** Characters XML 1.0 cannot hold (control characters but tab, line feed and carriage return): left out. */
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g

const text = (value: string) => escapeXml(value.replace(NOT_XML, ''))

/** PDF/A's declaration of the PDF/UA identification schema: PDF/A admits no XMP property that is not declared. */
const PDFUA_EXTENSION = [
  '<rdf:Description rdf:about=""',
  ' xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/"',
  ' xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#"',
  ' xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">',
  '<pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">',
  '<pdfaSchema:schema>PDF/UA Universal Accessibility Schema</pdfaSchema:schema>',
  '<pdfaSchema:namespaceURI>http://www.aiim.org/pdfua/ns/id/</pdfaSchema:namespaceURI>',
  '<pdfaSchema:prefix>pdfuaid</pdfaSchema:prefix>',
  '<pdfaSchema:property><rdf:Seq><rdf:li rdf:parseType="Resource">',
  '<pdfaProperty:name>part</pdfaProperty:name>',
  '<pdfaProperty:valueType>Integer</pdfaProperty:valueType>',
  '<pdfaProperty:category>internal</pdfaProperty:category>',
  '<pdfaProperty:description>The part of ISO 14289 the document conforms to</pdfaProperty:description>',
  '</rdf:li></rdf:Seq></pdfaSchema:property>',
  '</rdf:li></rdf:Bag></pdfaExtension:schemas>',
  '</rdf:Description>',
]

/**
 * The XMP metadata of an archival (PDF/A) or accessible (PDF/UA) document, or both (pure): its
 * identification and the same document information as its Info dictionary, field for field (the
 * standards ask the two to agree), its dates as XMP writes them. Written by dutil rather than
 * taken from the program that made the PDF: Ghostscript's leaves out document information in
 * characters outside PDFDocEncoding (Greek, Cyrillic, CJK), Chromium writes none.
 */
export function xmpPacket(o: {
  pdfa?: PdfaLevel
  pdfua?: boolean
  info: DocumentInfo
  created: string
  modified: string
}): string {
  const { info } = o
  const props: string[] = []
  if (info.title !== undefined)
    props.push(`<dc:title><rdf:Alt><rdf:li xml:lang="x-default">${text(info.title)}</rdf:li></rdf:Alt></dc:title>`)
  if (info.author !== undefined)
    props.push(`<dc:creator><rdf:Seq><rdf:li>${text(info.author)}</rdf:li></rdf:Seq></dc:creator>`)
  if (info.subject !== undefined)
    props.push(
      `<dc:description><rdf:Alt><rdf:li xml:lang="x-default">${text(info.subject)}</rdf:li></rdf:Alt></dc:description>`,
    )
  if (info.keywords !== undefined) props.push(`<pdf:Keywords>${text(info.keywords.join(', '))}</pdf:Keywords>`)
  if (info.producer !== undefined) props.push(`<pdf:Producer>${text(info.producer)}</pdf:Producer>`)
  if (info.creator !== undefined) props.push(`<xmp:CreatorTool>${text(info.creator)}</xmp:CreatorTool>`)
  props.push(`<xmp:CreateDate>${o.created}</xmp:CreateDate>`, `<xmp:ModifyDate>${o.modified}</xmp:ModifyDate>`)
  if (o.pdfa) props.push(`<pdfaid:part>${pdfaPart(o.pdfa)}</pdfaid:part>`, '<pdfaid:conformance>B</pdfaid:conformance>')
  if (o.pdfua) props.push('<pdfuaid:part>1</pdfuaid:part>')
  return [
    '<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>',
    '<x:xmpmeta xmlns:x="adobe:ns:meta/">',
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">',
    '<rdf:Description rdf:about=""',
    ' xmlns:dc="http://purl.org/dc/elements/1.1/"',
    ' xmlns:pdf="http://ns.adobe.com/pdf/1.3/"',
    ' xmlns:xmp="http://ns.adobe.com/xap/1.0/"',
    ...(o.pdfa ? [' xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"'] : []),
    ...(o.pdfua ? [' xmlns:pdfuaid="http://www.aiim.org/pdfua/ns/id/"'] : []),
    '>',
    '<dc:format>application/pdf</dc:format>',
    ...props,
    '</rdf:Description>',
    ...(o.pdfa && o.pdfua ? PDFUA_EXTENSION : []),
    '</rdf:RDF>',
    '</x:xmpmeta>',
    '<?xpacket end="w"?>',
  ].join('\n')
}
