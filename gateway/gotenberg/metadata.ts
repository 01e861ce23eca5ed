/**
 * Gotenberg's metadata read answer for one PDF (its ExifTool names and forms), from the facts of
 * its pdf-info job. Only what pdf-info reads is given (docs/gotenberg.md lists the names).
 */
export function gotenbergMetadataOf(name: string, facts: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    FileName: name,
    FileType: 'PDF',
    FileTypeExtension: 'pdf',
    MIMEType: 'application/pdf',
  }
  if (typeof facts.pdfVersion === 'string') out.PDFVersion = Number(facts.pdfVersion)
  if (typeof facts.linearized === 'boolean') out.Linearized = facts.linearized ? 'Yes' : 'No'
  if (typeof facts.pageCount === 'number') out.PageCount = facts.pageCount
  for (const [field, tag] of [
    ['title', 'Title'],
    ['author', 'Author'],
    ['subject', 'Subject'],
    ['creator', 'Creator'],
    ['producer', 'Producer'],
  ] as const)
    if (typeof facts[field] === 'string') out[tag] = facts[field]
  // Several keywords as a list, one as a text, as ExifTool gives them.
  if (typeof facts.keywords === 'string') {
    const keywords = facts.keywords.split(', ')
    out.Keywords = keywords.length > 1 ? keywords : keywords[0]
  }
  if (typeof facts.created === 'string') out.CreateDate = exifDate(facts.created)
  // Gotenberg's answer names the modification date ModDate (ExifTool's PDF tag is ModifyDate): both.
  if (typeof facts.modified === 'string') out.ModDate = out.ModifyDate = exifDate(facts.modified)
  return out
}

/** An ISO 8601 date as ExifTool writes one ("2026:07:01 09:30:00+02:00"). */
function exifDate(iso: string): string {
  return iso.replace(/^(\d{4})-(\d{2})-(\d{2})T/, '$1:$2:$3 ')
}
