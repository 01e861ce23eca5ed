import { JOB_STATES } from '../contract/crd-schemas.js'
import { CONTRACT_SLUGS } from '../contract/utility.js'
import { createdAtOfJobId } from '../platform/db/job-row.js'
import type { JobListQuery } from '../platform/db/jobs-table.js'
import { effectiveStatus, type JobRecord } from '../contract/job-view.js'
import { invalid, type ErrorDetail } from './api-error.js'
import type { JobSummary as ConsoleJobSummary } from './console/ui/api-types.js'

export const LIST_LIMITS = { default: 25, max: 100 } as const
const STATES: readonly string[] = JOB_STATES

export interface ListQuery {
  utility?: string
  status?: string
  limit: number
  /** Only jobs older than this id (ULIDs sort by creation time). */
  before?: string
}

/** A job in a list (the console's summary without the key's id). */
export type JobSummary = Omit<ConsoleJobSummary, 'apiKeyId'>

/**
 * The opaque cursor: the last id of a page, with the filters it was made for. The id is a ULID,
 * so it carries the job's creation time too: the cursor is the keyset (created_at, id).
 */
export function encodeCursor(lastId: string, q: Pick<ListQuery, 'utility' | 'status'>): string {
  return Buffer.from(JSON.stringify({ v: 1, b: lastId, u: q.utility ?? null, s: q.status ?? null })).toString(
    'base64url',
  )
}

function decodeCursor(raw: string, q: Pick<ListQuery, 'utility' | 'status'>): string {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as {
      v: number
      b: string
      u: string | null
      s: string | null
    }
    if (c.v !== 1 || typeof c.b !== 'string' || !/^job_[0-9A-Z]{26}$/.test(c.b)) throw new Error('shape')
    if ((c.u ?? undefined) !== q.utility || (c.s ?? undefined) !== q.status) {
      throw invalid('The cursor belongs to a list with other filters; start again without it.', [
        { path: 'cursor', message: 'does not match the filters' },
      ])
    }
    return c.b
  } catch (err) {
    if (err instanceof Error && err.name === 'ApiError') throw err
    throw invalid('The cursor is not valid; pass nextCursor exactly as it was returned.', [
      { path: 'cursor', message: 'is not a valid cursor' },
    ])
  }
}

/** Parses and checks the list query; every problem is a 400 with details. */
export function parseListQuery(query: Record<string, unknown>): ListQuery {
  const details: ErrorDetail[] = []
  const one = (name: string): string | undefined => {
    const v = query[name]
    if (v === undefined) return undefined
    if (typeof v !== 'string') {
      details.push({ path: name, message: 'must be given once' })
      return undefined
    }
    return v
  }
  const utility = one('utility')
  const status = one('status')
  const limitRaw = one('limit')
  const cursor = one('cursor')
  if (utility !== undefined && !(CONTRACT_SLUGS as readonly string[]).includes(utility))
    details.push({ path: 'utility', message: `must be one of ${CONTRACT_SLUGS.join(', ')}` })
  if (status !== undefined && !STATES.includes(status))
    details.push({ path: 'status', message: `must be one of ${STATES.join(', ')}` })
  let limit: number = LIST_LIMITS.default
  if (limitRaw !== undefined) {
    if (!/^\d{1,3}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > LIST_LIMITS.max)
      details.push({ path: 'limit', message: 'must be an integer from 1 to 100' })
    else limit = Number(limitRaw)
  }
  if (details.length) throw invalid('The list query is not valid.', details)
  const q: ListQuery = { utility, status, limit }
  if (cursor !== undefined) q.before = decodeCursor(cursor, q)
  return q
}

export function toSummary(job: JobRecord): JobSummary {
  const s = effectiveStatus(job)
  return {
    id: job.spec.jobId,
    utility: job.spec.utility,
    mode: job.spec.mode,
    status: s.state,
    source: job.spec.source ?? 'api',
    createdAt: job.spec.createdAt,
    finishedAt: s.finishedAt ?? null,
    totalMs: s.timings?.totalMs ?? null,
    upstreamMs: s.timings?.upstreamMs ?? null,
    errorCode: s.state === 'failed' ? (s.error?.code ?? null) : null,
    apiKeyName: job.spec.apiKeyName || null,
    userEmail: job.spec.userEmail ?? null,
    fileCount: s.state === 'succeeded' ? (s.result?.files.length ?? 0) : 0,
  }
}

/** The job-record query for one key's page. */
export function listQueryFor(apiKeyId: string, q: ListQuery): JobListQuery {
  const after = q.before ? { createdAt: createdAtOfJobId(q.before)!, id: q.before } : undefined
  return { apiKeyId, utility: q.utility, state: q.status, after, limit: q.limit }
}

/**
 * One page of a key's jobs, newest first, from the up to limit + 1 rows the keyset query gave.
 * The cursor is the last job handed out, so jobs created between pages can never shift later
 * pages: no item twice, none skipped.
 */
export function pageOf(
  rows: readonly JobRecord[],
  q: Pick<ListQuery, 'limit' | 'utility' | 'status'>,
): { items: JobSummary[]; nextCursor: string | null } {
  const page = rows.slice(0, q.limit)
  const more = rows.length > q.limit
  return { items: page.map(toSummary), nextCursor: more ? encodeCursor(page[page.length - 1].spec.jobId, q) : null }
}
