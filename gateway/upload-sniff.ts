/**
 * An upload's content type, told by its first bytes, never by the name or the Content-Type the
 * client sent: what a job will find when it reads the file. Unknown content is
 * application/octet-stream.
 */
export const SNIFF_BYTES = 512

const starts = (head: Buffer, ...bytes: number[]) => bytes.every((b, i) => head[i] === b)

export function sniffContentType(head: Buffer): string {
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf'
  if (starts(head, 0x50, 0x4b, 0x03, 0x04) || starts(head, 0x50, 0x4b, 0x05, 0x06)) return 'application/zip'
  if (starts(head, 0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1)) return 'application/x-ole-storage'
  if (head.subarray(0, 5).toString('latin1') === '{\\rtf') return 'application/rtf'
  if (starts(head, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png'
  if (starts(head, 0xff, 0xd8, 0xff)) return 'image/jpeg'
  if (head.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif'
  const text = head
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase()
  if (
    text.startsWith('<!doctype html') ||
    text.startsWith('<html') ||
    text.startsWith('<head') ||
    text.startsWith('<body')
  )
    return 'text/html'
  return 'application/octet-stream'
}
