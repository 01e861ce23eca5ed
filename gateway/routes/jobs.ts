import Router from '@koa/router'
import type { Context } from 'koa'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { objectNameOf, ulidOf } from '../../contract/ids.js'
import { effectiveStatus } from '../../contract/job-view.js'
import { ApiError, invalid, notFound } from '../api-error.js'
import type { AuthenticatedKey } from '../auth.js'
import { listPage, parseListQuery } from '../job-list.js'
import type { RouteDeps } from './context.js'

export const MAX_WAIT_SECONDS = 60
/** How long a cancel waits for the operator to confirm before answering. */
export const CANCEL_CONFIRM_MS = 15_000

export function parseWait(raw: unknown): number {
  if (raw === undefined) return 0
  if (typeof raw !== 'string' || !/^\d{1,2}$/.test(raw) || Number(raw) > MAX_WAIT_SECONDS) {
    throw invalid('wait must be an integer from 0 to 60.', [{ path: 'wait', message: 'must be an integer from 0 to 60' }])
  }
  return Number(raw)
}

/** The caller's job by public id; 404 for unknown ids and for other keys' jobs alike. */
export async function ownJob(ctx: Context, deps: RouteDeps): Promise<UtilityJobResource> {
  const id = ctx.params.id as string
  const key = ctx.state.key as AuthenticatedKey
  const job = ulidOf(id, 'job') ? await deps.store.get(objectNameOf(id)) : undefined
  if (!job || job.spec.apiKeyId !== key.id || job.spec.jobId !== id) throw notFound(`No job ${JSON.stringify(id.slice(0, 100))}.`)
  ctx.state.jobId = job.spec.jobId
  return job
}

const notCancellable = (state: string) => new ApiError('conflict', `The job is ${state}; only queued jobs can be cancelled.`)

export function jobRoutes(deps: RouteDeps): Router {
  const router = new Router()

  router.get('/v1/jobs', (ctx) => {
    const key = ctx.state.key as AuthenticatedKey
    const q = parseListQuery(ctx.query)
    ctx.body = listPage(deps.store.list(), key.id, q)
  })

  router.get('/v1/jobs/:id', async (ctx) => {
    const wait = parseWait(ctx.query.wait)
    const job = await ownJob(ctx, deps)
    const latest = await deps.store.waitForTerminal(job, wait * 1000, deps.shutdown)
    ctx.status = 200
    ctx.body = await deps.links.view(latest)
  })

  // The operator decides (it alone writes status): the gateway asks, then waits to see which
  // way it went. A job already running when the request lands answers 409.
  router.post('/v1/jobs/:id/cancel', async (ctx) => {
    const job = await ownJob(ctx, deps)
    const state = effectiveStatus(job).state
    if (state !== 'queued') throw notCancellable(state)
    const asked = job.spec.cancelRequested ? job : await deps.store.patchSpec(job.metadata.name, { cancelRequested: true })
    const decided = await deps.store.waitUntil(asked, (j) => effectiveStatus(j).state !== 'queued', CANCEL_CONFIRM_MS, deps.shutdown)
    const outcome = effectiveStatus(decided).state
    if (outcome === 'queued') throw new Error(`cancel of ${job.spec.jobId} not confirmed by the operator within ${CANCEL_CONFIRM_MS} ms`)
    if (outcome !== 'cancelled') throw notCancellable(outcome)
    deps.log.info({ requestId: ctx.state.requestId, jobId: job.spec.jobId }, 'job cancelled')
    ctx.status = 200
    ctx.body = await deps.links.view(decided)
  })
  return router
}
