import type { Context } from 'koa'
import { ERROR_STATUS, type ErrorCode } from '../../contract/error-codes.js'
import { effectiveStatus, type JobRecord } from '../../contract/job-view.js'
import type { RouteDeps } from './context.js'

export const SYNC_RETRY_AFTER_SECONDS = 5

/** Answers a run route with the job: 202 while not finished; a finished sync job by its outcome. */
export async function respondWithJob(
  ctx: Context,
  deps: RouteDeps,
  job: JobRecord,
  waitForResult: boolean,
): Promise<void> {
  if (waitForResult && (await respondWithFile(ctx, deps, job))) return
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

/**
 * A sync run that succeeded with exactly one file, asked for that file's type (`Accept:
 * application/pdf`, say) rather than JSON, is answered with the file's bytes themselves, its job
 * id in `Dutil-Job-Id`; anything else is answered with the job as usual. Whether it was.
 */
async function respondWithFile(ctx: Context, deps: RouteDeps, job: JobRecord): Promise<boolean> {
  const status = effectiveStatus(job)
  const files = status.state === 'succeeded' ? (status.result?.files ?? []) : []
  const file = files.length === 1 ? files[0] : undefined
  if (!file?.contentType || !ctx.get('Accept')) return false
  // The job itself is JSON: a JSON file (pdf-info's bookmarks, an unzipped .json) never stands in for it.
  if (file.contentType.split(';')[0].trim().toLowerCase() === 'application/json') return false
  if (ctx.accepts('application/json', file.contentType) !== file.contentType) return false
  const body = await deps.storage.getObject(deps.bucket, file.key)
  ctx.status = 200
  ctx.type = file.contentType
  if (file.size !== null) ctx.length = file.size
  ctx.set('Dutil-Job-Id', job.spec.jobId)
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.set('Content-Disposition', contentDisposition(file.name))
  ctx.body = body
  return true
}

/** An attachment named `name`: an ASCII fallback and the UTF-8 name (RFC 6266). */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_')
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`
}
