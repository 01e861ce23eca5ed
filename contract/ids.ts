import { decodeTime, encodeTime, monotonicFactory, ulid } from 'ulid'

/** 26 Crockford base-32 characters; the first at most 7 (a ULID's 48-bit time ends there). */
const ULID_RE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/

export type IdPrefix = 'job' | 'key' | 'usr' | 'inv' | 'file'

/**
 * A maker of public ids of the kinds made one at a time (files: {@link newFileBatch}), with its own
 * monotonic state: `<prefix>_` + ULID (26 Crockford base-32 characters, sortable by time) whose time
 * is `now` (a job's creation time is read back from its id: the job record's partition key and its
 * list's keyset). Ids of one millisecond increase; a time earlier than one already used (the clock
 * stepped back) gets a ULID of its own time, where a monotonic ULID would carry the later one. A
 * job's id carries its tenant's code (`code`, contract/tenants.ts) in the first 40 bits of its
 * random part: ids of one tenant in one millisecond still increase, and 40 random bits stay its own.
 */
export function idMaker(): (prefix: IdPrefix, now?: number, code?: string) => string {
  const nextUlid = monotonicFactory()
  // The latest time nextUlid was given: it makes an earlier time's ULID with its own later time.
  let monotonicSince = -Infinity
  return (prefix, now = Date.now(), code) => {
    let id: string
    if (now < monotonicSince) id = ulid(now)
    else {
      monotonicSince = now
      id = nextUlid(now)
    }
    return `${prefix}_${code ? `${id.slice(0, 10)}${code}${id.slice(10 + TENANT_CODE_CHARS)}` : id}`
  }
}

/** The process's public ids ({@link idMaker}). */
export const newId = idMaker()

/** Characters of a tenant's code (contract/tenants.ts): 40 bits, in the ULID alphabet. */
export const TENANT_CODE_CHARS = 8

/** The tenant code a job id carries after its time, or null when it is no job id. */
export function codeOfJobId(jobId: string): string | null {
  return ulidOf(jobId, 'job') ? jobId.slice('job_'.length + 10, 'job_'.length + 10 + TENANT_CODE_CHARS) : null
}

/** `?` for each character of a job id but its tenant's code: the pattern of a tenant's job ids in a grant. */
export function jobIdPattern(code: string): string {
  return `job_${'?'.repeat(10)}${code}${'?'.repeat(26 - 10 - TENANT_CODE_CHARS)}`
}

/** Characters of a file id's ULID that the files of one batch share: its time and 60 random bits. */
export const FILE_BATCH_CHARS = 22

/**
 * Ids for the files of one request (a multipart run's parts): `file_` + a ULID whose first
 * {@link FILE_BATCH_CHARS} characters (time and 60 random bits) are the batch's own, and whose
 * last four count the files (up to 1,048,576). File ids are never monotonic otherwise (a plain
 * random ULID each), so two files share those 22 characters only when one request made them
 * both: a runner's storage grant names such a batch by that prefix (contract/storage-grant.ts),
 * which then covers the request's own files and nobody else's.
 */
export function newFileBatch(now: number = Date.now()): () => string {
  const base = `${encodeTime(now, 10)}${ulid(now).slice(10, FILE_BATCH_CHARS)}`
  let n = 0
  return () => {
    if (n >= 32 ** 4) throw new Error('a file batch holds at most 1,048,576 files')
    let seq = ''
    for (let v = n++, i = 0; i < 4; i++, v = Math.floor(v / 32)) seq = CROCKFORD[v % 32] + seq
    return `file_${base}${seq}`
  }
}

/** One file's id: a random ULID (never monotonic: see {@link newFileBatch}). */
export const newFileId = (now: number = Date.now()): string => `file_${ulid(now)}`

/** The ULID alphabet (Crockford's base 32). */
export const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** The ULID part of a public id, or null when the id is not of the given kind. */
export function ulidOf(id: string, prefix: IdPrefix): string | null {
  if (!id.startsWith(`${prefix}_`)) return null
  const ulid = id.slice(prefix.length + 1)
  return ULID_RE.test(ulid) ? ulid : null
}

/** When an id of the given kind was made (its ULID's time, ISO 8601), or null when it is not one. */
export function createdAtOfId(id: string, prefix: IdPrefix): string | null {
  const ulid = ulidOf(id, prefix)
  return ulid ? new Date(decodeTime(ulid)).toISOString() : null
}

/**
 * Kubernetes object names must be lowercase DNS labels, so `job_01J…` is stored as `job-01j…`.
 * The mapping is one-to-one because ULIDs use a single case.
 */
export function objectNameOf(id: string): string {
  return id.replace('_', '-').toLowerCase()
}

export function idOfObjectName(name: string): string {
  const dash = name.indexOf('-')
  return `${name.slice(0, dash)}_${name.slice(dash + 1).toUpperCase()}`
}
