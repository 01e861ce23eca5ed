import type { Context } from 'koa'
import { ERROR_STATUS, type ErrorCode } from '../../contract/error-codes.js'
import type { JobRecord } from '../../contract/job-view.js'
import type { RouteDeps } from './context.js'

export const SYNC_RETRY_AFTER_SECONDS = 5

/** Answers a run route with the job: 202 while not finished; a finished sync job by its outcome. */
export async function respondWithJob(
  ctx: Context,
  deps: RouteDeps,
  job: JobRecord,
  waitForResult: boolean,
): Promise<void> {
  const view = await deps.links.view(job)
  if (waitForResult && view.status === 'succeeded') {
    ctx.status = 200
  } else if (waitForResult && view.status === 'failed') {
    ctx.status = ERROR_STATUS[(view.error?.code ?? 'internal') as ErrorCode] ?? 500
  } else if (waitForResult && view.status === 'cancelled') {
    ctx.status = 200
  } else {
    ctx.status = 202
    ctx.set('Location', view.links.self)
    if (waitForResult) ctx.set('Retry-After', String(SYNC_RETRY_AFTER_SECONDS))
  }
  ctx.body = view
}
