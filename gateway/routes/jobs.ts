import { requestLogFields } from '../request-id.js'
import Router from '@koa/router'
import type { Context } from 'koa'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { effectiveStatus, isTerminal, type JobRecord } from '../../contract/job-view.js'
import { objectNameOf } from '../../contract/ids.js'
import { asResource } from '../job-reader.js'
import { ApiError, invalid, notFound } from '../api-error.js'
import type { AuthenticatedKey } from '../auth.js'
import { listQueryFor, pageOf, parseListQuery } from '../job-list.js'
import type { RouteDeps } from './context.js'

export const MAX_WAIT_SECONDS = 60
/** How long a cancel waits for the operator to confirm before answering. */
export const CANCEL_CONFIRM_MS = 15_000

export function parseWait(raw: unknown): number {
  if (raw === undefined) return 0
  if (typeof raw !== 'string' || !/^\d{1,2}$/.test(raw) || Number(raw) > MAX_WAIT_SECONDS) {
    throw invalid('wait must be an integer from 0 to 60.', [
      { path: 'wait', message: 'must be an integer from 0 to 60' },
    ])
  }
  return Number(raw)
}

/**
 * The caller's job by public id, from its UtilityJob while it lives, else from the job record;
 * 404 for unknown ids and for other keys' jobs alike.
 */
export async function ownJob(ctx: Context, deps: RouteDeps): Promise<JobRecord | UtilityJobResource> {
  const id = ctx.params.id as string
  const key = ctx.state.key as AuthenticatedKey
  const job = await deps.reader.find(id)
  if (!job || job.spec.apiKeyId !== key.id || job.spec.jobId !== id)
    throw notFound(`No job ${JSON.stringify(id.slice(0, 100))}.`)
  ctx.state.jobId = job.spec.jobId
  return job
}

const notCancellable = (state: string) =>
  new ApiError('conflict', `The job is ${state}; only queued jobs can be cancelled.`)

export function jobRoutes(deps: RouteDeps): Router {
  const router = new Router()

  router.get('/v1/jobs', async (ctx) => {
    const key = ctx.state.key as AuthenticatedKey
    const q = parseListQuery(ctx.query)
    ctx.body = pageOf(await deps.records.list(listQueryFor(key.id, q)), q)
  })

  router.get('/v1/jobs/:id', async (ctx) => {
    const wait = parseWait(ctx.query.wait)
    const job = await ownJob(ctx, deps)
    // Woken by the watch (the job's UtilityJob); a finished job is answered at once.
    const latest = isTerminal(job)
      ? job
      : await deps.waiters.waitForTerminal(asResource(job), wait * 1000, deps.shutdown)
    ctx.status = 200
    ctx.body = await deps.links.view(latest)
  })

  // The operator decides (it alone writes status): the gateway asks, then waits to see which
  // way it went. A job already running when the request lands answers 409.
  router.post('/v1/jobs/:id/cancel', async (ctx) => {
    const found = await ownJob(ctx, deps)
    const state = effectiveStatus(found).state
    if (state !== 'queued') throw notCancellable(state)
    // The cancel is asked of the UtilityJob (written a moment after the row).
    const live = await deps.jobs.get(objectNameOf(found.spec.jobId))
    const job = live?.spec.jobId === found.spec.jobId ? live : undefined
    if (!job)
      throw new ApiError('conflict', 'The job is still being handed to the cluster; try the cancel again in a moment.')
    const asked = job.spec.cancelRequested
      ? job
      : await deps.jobs.patchSpec(job.metadata.name, { cancelRequested: true })
    const decided = await deps.waiters.waitUntil(
      asked,
      (j) => effectiveStatus(j).state !== 'queued',
      CANCEL_CONFIRM_MS,
      deps.shutdown,
    )
    const outcome = effectiveStatus(decided).state
    if (outcome === 'queued')
      throw new Error(`cancel of ${job.spec.jobId} not confirmed by the operator within ${CANCEL_CONFIRM_MS} ms`)
    if (outcome !== 'cancelled') throw notCancellable(outcome)
    deps.log.info({ ...requestLogFields(ctx), jobId: job.spec.jobId }, 'job cancelled')
    ctx.status = 200
    ctx.body = await deps.links.view(decided)
  })
  return router
}
