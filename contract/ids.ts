import { decodeTime, monotonicFactory } from 'ulid'

const nextUlid = monotonicFactory()
/** 26 Crockford base-32 characters; the first at most 7 (a ULID's 48-bit time ends there). */
const ULID_RE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/

export type IdPrefix = 'job' | 'key' | 'usr' | 'inv' | 'file'

/** A new public id: `<prefix>_` + ULID (26 Crockford base-32 characters, sortable by time). */
export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}_${nextUlid(now)}`
}

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
