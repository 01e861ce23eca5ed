import { requestLogFields, type RequestLogFields } from '../request-id.js'
import Router from '@koa/router'
import type { Context } from 'koa'
import { newId } from '../../contract/ids.js'
import { keyTenant, tenantCode } from '../../contract/tenants.js'
import { effectiveStatus, isTerminal, type JobRecord } from '../../contract/job-view.js'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import type { UtilityDefinition } from '../../contract/utility.js'
import { acceptJob, type Accepted, completeHandOff } from '../accept-job.js'
import { ApiError, invalid } from '../api-error.js'
import { assertCallbackUrlAllowed } from '../callback-url.js'
import { assertStorageInputsReadable } from '../storage-inputs.js'
import type { AuthenticatedKey } from '../auth.js'
import { idempotencyHash, readIdempotencyKey } from '../idempotency.js'
import { asResource } from '../job-reader.js'
import { readJsonBody } from '../json-body.js'
import { usableUtility } from './utilities.js'
import { isMultipart } from '../multipart-form.js'
import { readMultipartRun } from '../multipart-run.js'
import { traceparentOf } from '../../platform/tracing.js'
import { newJobSpec, type RunRequest, utilityJobResource } from '../utility-job.js'
import { validateRunRequest } from '../validation.js'
import type { RouteDeps } from './context.js'
import { syncWait } from './sync-wait.js'
import { respondWithJob } from './respond.js'

/** Header sent by tests to shorten a job's time limit; honoured only with test hooks on. */
export const TEST_DEADLINE_HEADER = 'Dutil-Test-Deadline-Seconds'

function readPrefer(ctx: Context): boolean {
  const prefer = ctx.get('Prefer')
  if (prefer === '' && ctx.headers.prefer === undefined) return false
  if (prefer.trim() !== 'respond-async') {
    throw invalid('Prefer accepts only respond-async.', [{ path: 'Prefer', message: 'must be respond-async' }])
  }
  return true
}

async function run(ctx: Context, deps: RouteDeps, asyncRoute: boolean): Promise<void> {
  const key = ctx.state.key as AuthenticatedKey
  const utility = usableUtility(ctx.params.slug as string, key)
  const preferAsync = readPrefer(ctx)
  const mode = asyncRoute || preferAsync ? 'async' : 'sync'
  const idemKey = readIdempotencyKey(ctx.headers['idempotency-key'])
  const hash = idemKey === undefined ? undefined : idempotencyHash(key.id, idemKey)
  const findEarlier = () => (hash ? deps.records.findIdempotent(key.id, hash) : Promise.resolve(undefined))
  const multipart = isMultipart(ctx)
  // A multipart retry of an Idempotency-Key that has its job is read and checked, and its files
  // stored nowhere: it gets the original job (below) whatever its files. (A job its twin makes
  // meanwhile is found by the accept itself.)
  let earlier = multipart ? await findEarlier() : undefined
  const form = multipart ? await readMultipartRun(ctx, deps.uploads, key.id, utility, earlier !== undefined) : undefined
  const body = form ? form.body : await readJsonBody(ctx)
  if (mode === 'sync' && body && typeof body === 'object' && 'callbackUrl' in body) {
    throw invalid('callbackUrl is only accepted by the async route (POST /v1/utilities/{slug}/jobs).', [
      { path: 'callbackUrl', message: 'is not allowed on a sync run' },
    ])
  }
  validateRunRequest(body, utility, mode)
  assertCallbackUrlAllowed(body)
  // The key alone identifies a valid request: a retry gets the original job whatever its body.
  if (!multipart) earlier = await findEarlier()
  if (earlier) return replay(ctx, deps, earlier, utility, mode)
  const accepted = await acceptRun(ctx, deps, {
    utility,
    key,
    mode,
    request: body as RunRequest,
    hash,
    stored: form?.stored,
  })
  if (accepted.kind === 'existing') return replay(ctx, deps, accepted.job, utility, mode)
  const created = accepted.job
  if (mode === 'async') return respondWithJob(ctx, deps, created, false)
  await respondWithJob(ctx, deps, await waitForSyncRun(ctx, deps, created), true)
}

/**
 * A sync run's wait for its job: until it finishes, the sync wait runs out, the gateway shuts
 * down or the client hangs up (then a job still queued is cancelled: see forgetQueued).
 */
export async function waitForSyncRun(
  ctx: Context,
  deps: RouteDeps,
  created: UtilityJobResource,
): Promise<UtilityJobResource> {
  const wait = syncWait(ctx, deps.shutdown)
  try {
    const answered = await deps.waiters.waitForTerminal(created, deps.syncWaitMs, wait.signal)
    if (wait.clientGone()) await forgetQueued(deps, answered, requestLogFields(ctx))
    return answered
  } finally {
    wait.dispose()
  }
}

/**
 * The one way a run request becomes a job, once its body is read and checked against the
 * utility's schema: its s3:// inputs checked as the key's own, its spec made, and the accept path
 * taken (docs/api.md). Every way in (the JSON and multipart routes, the Gotenberg routes) ends here.
 */
export async function acceptRun(
  ctx: Context,
  deps: RouteDeps,
  run: {
    utility: UtilityDefinition
    key: AuthenticatedKey
    mode: 'sync' | 'async'
    request: RunRequest
    hash?: string
    /** Uploads the request itself stored (a multipart run's parts), by id: the key's own, not read again. */
    stored?: ReadonlyMap<string, string>
  },
): Promise<Accepted> {
  const { utility, key, mode, request: req } = run
  const storageInputKeys = await assertStorageInputsReadable(req.input, {
    bucket: deps.bucket,
    find: (id) => deps.reader.find(id),
    owns: (job) => job.spec.apiKeyId === key.id,
    upload: (id) => {
      const storageKey = run.stored?.get(id)
      return storageKey ? Promise.resolve({ storageKey }) : deps.uploads.find(key.id, id)
    },
  })
  const testDeadline = deps.testHooks ? Number(ctx.get(TEST_DEADLINE_HEADER)) : NaN
  const now = Date.now()
  const jobId = newId('job', now, tenantCode(keyTenant(key.id)))
  ctx.state.jobId = jobId
  const spec = newJobSpec({
    jobId,
    now,
    utility: utility.slug,
    mode,
    owner: { kind: 'key', id: key.id, name: key.name, owner: key.owner },
    request: req,
    storageInputKeys,
    idempotencyKeyHash: run.hash,
    deadlineSeconds: testDeadline,
  })
  const uj = utilityJobResource(spec, key.objectName, traceparentOf(ctx.state.traceContext))
  const accepted = await acceptJob(deps, uj, req.input)
  if (accepted.kind === 'created')
    deps.log.info({ ...requestLogFields(ctx), jobId, utility: utility.slug, mode, apiKeyId: key.id }, 'job accepted')
  return accepted
}

/**
 * A sync run whose client hung up while the job still waited for a run slot: nobody can read
 * its result (the caller never got the id), so it is cancelled rather than started. With an
 * Idempotency-Key it stays: the caller's retry with that key gets this job (docs/api.md, Sync runs).
 */
async function forgetQueued(deps: RouteDeps, job: UtilityJobResource, request: RequestLogFields): Promise<void> {
  if (job.spec.idempotencyKeyHash || effectiveStatus(job).state !== 'queued' || job.spec.cancelRequested) return
  try {
    await deps.jobs.patchSpec(job.metadata.name, { cancelRequested: true })
    deps.log.info({ ...request, jobId: job.spec.jobId }, 'sync client gone before its job started; job cancelled')
  } catch (err) {
    deps.log.warn(
      { ...request, jobId: job.spec.jobId, err: (err as Error).message },
      'cancelling the job of a sync client that left failed',
    )
  }
}

async function replay(
  ctx: Context,
  deps: RouteDeps,
  job: JobRecord,
  utility: UtilityDefinition,
  mode: 'sync' | 'async',
): Promise<void> {
  if (job.spec.utility !== utility.slug) {
    throw new ApiError('conflict', `This Idempotency-Key was already used for ${job.spec.utility}.`)
  }
  ctx.state.jobId = job.spec.jobId
  ctx.set('Idempotent-Replayed', 'true')
  const handed = await completeHandOff(deps, job, (ctx.state.key as AuthenticatedKey).objectName)
  const current =
    mode === 'sync' && !isTerminal(handed)
      ? await deps.waiters.waitForTerminal(asResource(handed), deps.syncWaitMs, deps.shutdown)
      : handed
  return respondWithJob(ctx, deps, current, mode === 'sync')
}

export function runUtilityRoutes(deps: RouteDeps): Router {
  const router = new Router()
  router.post('/v1/utilities/:slug', (ctx) => run(ctx, deps, false))
  router.post('/v1/utilities/:slug/jobs', (ctx) => run(ctx, deps, true))
  return router
}
