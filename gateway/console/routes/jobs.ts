import Router from '@koa/router'
import type { Context } from 'koa'
import { CONTRACT_SLUGS } from '../../../contract/utility.js'
import { JOB_STATES } from '../../../contract/crd-schemas.js'
import { createdAtOfJobId } from '../../../platform/db/job-row.js'
import type { JobListQuery } from '../../../platform/db/jobs-table.js'
import { objectNameOf, ulidOf } from '../../../contract/ids.js'
import { redeliveryProblem } from '../../../platform/callback-redelivery.js'
import type { JobRecord } from '../../../contract/job-view.js'
import { ApiError, invalid, type ErrorDetail } from '../../api-error.js'
import { toSummary } from '../../job-list.js'
import { authorize, signedIn, type ConsoleState } from '../http.js'
import { withoutAddresses } from '../redact-addresses.js'
import { can } from '../permissions.js'
import type { ConsoleDeps } from './deps.js'
import type { JobDetail, JobPage, JobSummary } from '../ui/api-types.js'

const DAY = /^\d{4}-\d{2}-\d{2}$/

/** Whether the person owns a job: one of their keys started it, or they ran it in the playground. */
export function ownsJob(job: JobRecord, s: ConsoleState, ownKeyIds: ReadonlySet<string>): boolean {
  if ((job.spec.source ?? 'api') === 'playground') return job.spec.userEmail === s.user.spec.email
  return ownKeyIds.has(job.spec.apiKeyId)
}

export function ownKeyIds(d: ConsoleDeps, s: ConsoleState): Set<string> {
  return new Set(
    d
      .keyList()
      .filter((k) => k.spec.createdBy?.userId === s.user.spec.userId)
      .map((k) => k.spec.keyId),
  )
}

/** A predicate for the jobs this person may see. */
export function jobVisibility(d: ConsoleDeps, s: ConsoleState): (job: JobRecord) => boolean {
  if (can(s.user.spec.role, 'jobs.read', 'other')) return () => true
  const own = ownKeyIds(d, s)
  return (job) => ownsJob(job, s, own)
}

interface ConsoleJobQuery {
  utility?: string
  status?: string
  key?: string
  from?: string
  to?: string
  before?: string
  limit: number
}

function parseQuery(q: Record<string, unknown>): ConsoleJobQuery {
  const details: ErrorDetail[] = []
  const one = (n: string) => (typeof q[n] === 'string' && q[n] !== '' ? (q[n] as string) : undefined)
  const out: ConsoleJobQuery = {
    utility: one('utility'),
    status: one('status'),
    key: one('key'),
    from: one('from'),
    to: one('to'),
    before: one('cursor'),
    limit: 50,
  }
  if (out.utility && !(CONTRACT_SLUGS as readonly string[]).includes(out.utility))
    details.push({ path: 'utility', message: 'is not a utility' })
  if (out.status && !(JOB_STATES as readonly string[]).includes(out.status))
    details.push({ path: 'status', message: `must be one of ${JOB_STATES.join(', ')}` })
  if (out.key && out.key !== 'playground' && !ulidOf(out.key, 'key'))
    details.push({ path: 'key', message: 'must be a key id or playground' })
  for (const n of ['from', 'to'] as const)
    if (out[n] && !DAY.test(out[n]!)) details.push({ path: n, message: 'must be a date YYYY-MM-DD' })
  if (out.before && !ulidOf(out.before, 'job')) details.push({ path: 'cursor', message: 'is not valid' })
  const limit = one('limit')
  if (limit) {
    if (!/^\d{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > 100)
      details.push({ path: 'limit', message: 'must be 1 to 100' })
    else out.limit = Number(limit)
  }
  if (details.length) throw invalid('The job filters are not valid.', details)
  return out
}

export function consoleJobSummary(job: JobRecord): JobSummary {
  return { ...toSummary(job), apiKeyId: job.spec.apiKeyId || null }
}

async function visibleJob(ctx: Context, d: ConsoleDeps): Promise<JobRecord> {
  const s = authorize(ctx, 'jobs.read', 'own')
  const id = ctx.params.id as string
  const job = await d.reader.find(id)
  if (!job || job.spec.jobId !== id || !jobVisibility(d, s)(job))
    throw new ApiError('not_found', `No job ${JSON.stringify(id.slice(0, 60))}.`)
  return job
}

export function jobRoutes(d: ConsoleDeps): Router {
  const r = new Router({ prefix: '/console/api/jobs' })

  r.get('/', async (ctx) => {
    const s = authorize(ctx, 'jobs.read', 'own')
    const q = parseQuery(ctx.query)
    // The job record, by keyset: the person's scope and every filter are index conditions.
    const scope: Partial<JobListQuery> = can(s.user.spec.role, 'jobs.read', 'other')
      ? {}
      : { ownedBy: { apiKeyIds: [...ownKeyIds(d, s)], userEmail: s.user.spec.email } }
    if (q.key === 'playground') scope.playground = {}
    else if (q.key) scope.apiKeyId = q.key
    const rows = await d.records.list({
      ...scope,
      utility: q.utility,
      state: q.status,
      createdFrom: q.from ? `${q.from}T00:00:00.000Z` : undefined,
      createdBefore: q.to ? new Date(Date.parse(`${q.to}T00:00:00Z`) + 86_400_000).toISOString() : undefined,
      after: q.before ? { createdAt: createdAtOfJobId(q.before)!, id: q.before } : undefined,
      limit: q.limit,
    })
    const page = rows.slice(0, q.limit)
    ctx.body = {
      items: page.map(consoleJobSummary),
      nextCursor: rows.length > q.limit ? page[page.length - 1].spec.jobId : null,
    } satisfies JobPage
  })

  r.get('/:id', async (ctx) => {
    const job = await visibleJob(ctx, d)
    const view = await d.links.view(job)
    const delivery = job.status?.callback
    // Addresses a callback host resolved to are for admins only (docs/security.md).
    const shown = signedIn(ctx).user.spec.role === 'admin' ? (t: string | null) => t : withoutAddresses
    const log = job.spec.callbackUrl ? await d.records.callbackLog(job.spec.jobId) : []
    const detail: JobDetail = {
      job: view,
      source: job.spec.source ?? 'api',
      apiKeyId: job.spec.apiKeyId || null,
      apiKeyName: job.spec.apiKeyName || null,
      userEmail: job.spec.userEmail ?? null,
      callbackDelivery: delivery
        ? {
            status: delivery.status,
            attempts: delivery.attempts,
            round: delivery.round ?? 1,
            lastAttemptAt: delivery.lastAttemptAt,
            lastStatusCode: delivery.lastStatusCode,
            lastError: shown(delivery.lastError ?? null),
            nextAttemptAt: delivery.nextAttemptAt,
            finishedAt: delivery.finishedAt,
          }
        : null,
      // Every attempt, oldest first: what each got back, how long it took, what came next.
      callbackLog: log.map((a) => ({ ...a, error: shown(a.error) })),
    }
    ctx.body = detail
  })

  /** Sends a finished job's callback again, with the same webhook-id (admins, members; externals for their own jobs). */
  r.post('/:id/callback/redeliver', async (ctx) => {
    const s = authorize(ctx, 'callbacks.redeliver', 'own')
    const job = await visibleJob(ctx, d)
    if (!can(s.user.spec.role, 'callbacks.redeliver', 'other') && !ownsJob(job, s, ownKeyIds(d, s)))
      throw new ApiError('forbidden', 'Your role does not allow this.')
    const live = await d.jobs.get(objectNameOf(job.spec.jobId))
    const problem = redeliveryProblem(live)
    if (problem) throw new ApiError('conflict', problem)
    const requestedAt = await d.jobs.requestRedelivery(live!.metadata.name)
    d.log.info({ jobId: job.spec.jobId, requestedAt, by: s.user.spec.userId }, 'callback redelivery requested')
    ctx.status = 202
    ctx.body = { jobId: job.spec.jobId, requestedAt, round: (live!.status?.callback?.round ?? 1) + 1 }
  })
  return r
}
