import { ulidOf } from './ids.js'

/**
 * Where a job's outputs are stored: `<utility>/<YYYY-MM-DD>/<job_id>/<file…>` (contract/storage-keys.ts).
 * The owner of an output key, or null when the key is not one.
 */
export function outputKeyOwner(key: string): { utility: string; day: string; jobId: string } | null {
  const m = /^([a-z0-9-]+)\/(\d{4}-\d{2}-\d{2})\/(job_[0-9A-HJKMNP-TV-Z]{26})\/.+$/.exec(key)
  if (!m || !ulidOf(m[3], 'job')) return null
  return { utility: m[1], day: m[2], jobId: m[3] }
}

/**
 * The upload an upload key names (`uploads/<tenant code>/<YYYY-MM-DD>/<file_id>/<name>`, or
 * without the code for one stored before codes), or null when the key is not one.
 */
export function uploadKeyOwner(key: string): { code?: string; day: string; fileId: string } | null {
  const m = /^uploads\/(?:([0-9A-HJKMNP-TV-Z]{8})\/)?(\d{4}-\d{2}-\d{2})\/(file_[0-9A-HJKMNP-TV-Z]{26})\/[^/]+$/.exec(
    key,
  )
  if (!m || !ulidOf(m[3], 'file')) return null
  return { ...(m[1] ? { code: m[1] } : {}), day: m[2], fileId: m[3] }
}

/** Every s3:// URL a run input names (its `url`, each `files[].url`, `assets[].url` and `attachments[].url`, edit-pdf's `stamp.image`), with its path in the body. */
export function storageUrlsOf(input: unknown): Array<{ path: string; url: string }> {
  const out: Array<{ path: string; url: string }> = []
  if (!input || typeof input !== 'object') return out
  const { url, files, assets, attachments } = input as {
    url?: unknown
    files?: unknown
    assets?: unknown
    attachments?: unknown
  }
  if (typeof url === 'string' && url.startsWith('s3://')) out.push({ path: 'input.url', url })
  // edit-pdf's stamp: a picture or a PDF.
  const stamp = (input as { stamp?: { image?: unknown } | null }).stamp?.image
  if (typeof stamp === 'string' && stamp.startsWith('s3://')) out.push({ path: 'input.stamp.image', url: stamp })
  for (const [field, list] of [
    ['files', files],
    ['assets', assets],
    ['attachments', attachments],
  ] as const) {
    if (!Array.isArray(list)) continue
    list.forEach((f, i) => {
      const u = (f as { url?: unknown } | null)?.url
      if (typeof u === 'string' && u.startsWith('s3://')) out.push({ path: `input.${field}.${i}.url`, url: u })
    })
  }
  return out
}
