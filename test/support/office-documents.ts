import { randomBytes } from 'node:crypto'
import { crc32, deflateSync } from 'node:zlib'
import * as XLSX from 'xlsx'
import { fileEntry, writeZip } from './zip-writer.js'

/**
 * Office documents made at test time around a URL of the test's own server: content that
 * LibreOffice fetches when it loads them with its default settings. Each also carries text, so a
 * converted PDF shows it was read.
 */

const xml = (s: string) => Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${s}`)
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')

const WORD_NS =
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" ' +
  'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" ' +
  'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" ' +
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ' +
  'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"'

/** A .docx of one document part (its text given whole, prolog and all), the document's relationships and media. */
function docx(documentXml: string, relationships = '', media: Record<string, Buffer> = {}): Buffer {
  return writeZip([
    fileEntry(
      '[Content_Types].xml',
      xml(
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
          '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
          '<Default Extension="xml" ContentType="application/xml"/>' +
          '<Default Extension="png" ContentType="image/png"/>' +
          '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
          '</Types>',
      ),
    ),
    fileEntry(
      '_rels/.rels',
      xml(
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
          '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>' +
          '</Relationships>',
      ),
    ),
    fileEntry(
      'word/_rels/document.xml.rels',
      xml(
        `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${relationships}</Relationships>`,
      ),
    ),
    fileEntry('word/document.xml', Buffer.from(documentXml)),
    // Images are stored: their bytes are compressed already.
    ...Object.entries(media).map(([name, body]) => fileEntry(`word/media/${name}`, body, 0)),
  ])
}

/** A PNG chunk: length, type, data, CRC of type and data. */
function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'latin1')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}

/**
 * A PNG of `side`×`side` random RGB pixels, deflate level 0: about 3 × side² bytes that no
 * compression shrinks, all of which a reader must inflate and decode.
 */
export function noisePng(side: number): Buffer {
  const row = 1 + side * 3
  const pixels = randomBytes(row * side)
  for (let y = 0; y < side; y++) pixels[y * row] = 0 // each row's filter: none
  const header = Buffer.alloc(13)
  header.writeUInt32BE(side, 0)
  header.writeUInt32BE(side, 4)
  header.set([8, 2, 0, 0, 0], 8) // 8 bits, RGB, deflate, adaptive filters, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(pixels, { level: 0 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/** A .docx of one line of text and one embedded image, `image` (a PNG), shown 2.5 cm square. */
export const docxWithImage = (image: Buffer): Buffer =>
  docxWithPicture('dutil office fixture, large image', { embed: image, name: 'large.png' })

/**
 * An .xlsx (SheetJS) of one sheet, `rows` × `columns` cells that are each a formula
 * (`=ROW()*<column>+1`), no cached values: all of them for LibreOffice to compute and lay out.
 */
export function workbookOfFormulas(rows: number, columns: number): Buffer {
  const sheet: XLSX.WorkSheet = {}
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < columns; c++) sheet[XLSX.utils.encode_cell({ r, c })] = { t: 'n', f: `ROW()*${c + 1}+1` }
  sheet['!ref'] = XLSX.utils.encode_range({ s: { r: 0, c: 0 }, e: { r: rows - 1, c: columns - 1 } })
  const book = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(book, sheet, 'Formulas')
  return XLSX.write(book, { type: 'buffer', bookType: 'xlsx', compression: true }) as Buffer
}

/** A .docx whose only image is linked, not embedded: a relationship with TargetMode="External" to `url`. */
export const docxWithLinkedImage = (url: string): Buffer =>
  docxWithPicture('dutil office fixture, linked image', { link: url, name: 'beacon.png' })

/**
 * A .docx of one line of text and one picture, 2.5 cm square, of relationship `rIdImg`: a part of
 * the file (`embed`, stored as word/media/<name>) or a URL (`link`, TargetMode="External").
 */
function docxWithPicture(text: string, image: { name: string } & ({ embed: Buffer } | { link: string })): Buffer {
  const embedded = 'embed' in image
  const picture =
    '<w:drawing><wp:inline><wp:extent cx="952500" cy="952500"/><wp:docPr id="1" name="Picture 1"/>' +
    '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic>' +
    `<pic:nvPicPr><pic:cNvPr id="1" name="${image.name}"/><pic:cNvPicPr/></pic:nvPicPr>` +
    `<pic:blipFill><a:blip ${embedded ? 'r:embed' : 'r:link'}="rIdImg"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
    '<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="952500" cy="952500"/></a:xfrm>' +
    '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic>' +
    '</wp:inline></w:drawing>'
  const target = embedded ? `media/${image.name}"` : `${esc(image.link)}" TargetMode="External"`
  return docx(
    xml(
      `<w:document ${WORD_NS}><w:body>` +
        `<w:p><w:r><w:t>${text}</w:t></w:r></w:p>` +
        `<w:p><w:r>${picture}</w:r></w:p>` +
        '</w:body></w:document>',
    ).toString(),
    `<Relationship Id="rIdImg" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="${target}/>`,
    embedded ? { [image.name]: image.embed } : {},
  )
}

/**
 * A .docx whose document part declares XML entities in its DTD: `&ext;`, an external entity at
 * `url` (read, it would fetch that URL and put its answer in the text), and `&lol9;`, nine levels
 * of tenfold nesting (expanded, a thousand million copies of "lol": the billion laughs).
 */
export function docxWithEntities(url: string): Buffer {
  const levels = Array.from(
    { length: 9 },
    (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`,
  ).join('')
  return docx(
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' +
      `<!DOCTYPE w:document [<!ENTITY ext SYSTEM "${esc(url)}"><!ENTITY lol "lol">${levels}]>\n` +
      `<w:document ${WORD_NS}><w:body>` +
      '<w:p><w:r><w:t>dutil office fixture, entities</w:t></w:r></w:p>' +
      '<w:p><w:r><w:t>external: &ext;</w:t></w:r></w:p>' +
      '<w:p><w:r><w:t>nested: &lol9;</w:t></w:r></w:p>' +
      '</w:body></w:document>',
  )
}

/** OpenDocument text: `mimetype` stored first, then the manifest and the parts given. */
function odt(parts: Record<string, string>, manifestExtra = ''): Buffer {
  const manifest =
    '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">' +
    '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>' +
    Object.keys(parts)
      .map((p) => `<manifest:file-entry manifest:full-path="${p}" manifest:media-type="text/xml"/>`)
      .join('') +
    manifestExtra +
    '</manifest:manifest>'
  return writeZip([
    fileEntry('mimetype', Buffer.from('application/vnd.oasis.opendocument.text'), 0),
    fileEntry('META-INF/manifest.xml', xml(manifest)),
    ...Object.entries(parts).map(([name, body]) => fileEntry(name, xml(body))),
  ])
}

const ODF_NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ' +
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ' +
  'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" ' +
  'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" ' +
  'xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.2"'

/** An .odt whose image is a link to `url` (draw:image xlink:href), not a part of the file. */
export function odtWithLinkedImage(url: string): Buffer {
  return odt({
    'content.xml':
      `<office:document-content ${ODF_NS}><office:body><office:text>` +
      '<text:p>dutil office fixture, linked image</text:p>' +
      '<text:p><draw:frame draw:name="beacon" svg:width="2cm" svg:height="2cm" text:anchor-type="as-char">' +
      `<draw:image xlink:href="${esc(url)}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>` +
      '</draw:frame></text:p>' +
      '</office:text></office:body></office:document-content>',
  })
}
