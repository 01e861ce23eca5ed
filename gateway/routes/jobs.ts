import Router from '@koa/router'
import type { Context } from 'koa'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { objectNameOf, ulidOf } from '../../contract/ids.js'
import { invalid, notFound } from '../api-error.js'
import type { AuthenticatedKey } from '../auth.js'
import type { RouteDeps } from './context.js'

export const MAX_WAIT_SECONDS = 60

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
  return job
}

export function jobRoutes(deps: RouteDeps): Router {
  const router = new Router()
  router.get('/v1/jobs/:id', async (ctx) => {
    const wait = parseWait(ctx.query.wait)
    const job = await ownJob(ctx, deps)
    const latest = await deps.store.waitForTerminal(job, wait * 1000, deps.shutdown)
    ctx.status = 200
    ctx.body = await deps.links.view(latest)
  })
  return router
}
