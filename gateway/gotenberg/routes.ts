import type { Context, Middleware, Next } from 'koa'
import { enabledUtility } from '../../runners/catalog.js'
import { newFileBatch } from '../../contract/ids.js'
import { effectiveStatus } from '../../contract/job-view.js'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import type { JobErrorCode } from '../../contract/error-codes.js'
import { ApiError, invalid } from '../api-error.js'
import { authenticate, type AuthenticatedKey, type KeyPresentation } from '../auth.js'
import type { KeyRegistry } from '../key-registry.js'
import type { KeyUsage } from '../key-usage.js'
import { isMultipart, readForm } from '../multipart-form.js'
import { readJsonObject } from '../../platform/storage-client.js'
import { readAtMost } from '../../platform/read-at-most.js'
import { rateLimit, type RateLimiter } from '../rate-limit.js'
import { requestLogFields } from '../request-id.js'
import type { RouteDeps } from '../routes/context.js'
import { s3UrlOf } from '../routes/files.js'
import { acceptRun, waitForSyncRun } from '../routes/run-utility.js'
import { usableUtility } from '../routes/utilities.js'
import { validateRunRequest } from '../validation.js'
import { answerFiles, type AnswerFile } from './answer.js'
import { gotenbergMetadataOf } from './metadata.js'
import {
  FormRefused,
  GOTENBERG_ROUTES,
  type FormFile,
  type GotenbergRoute,
  type PlannedRun,
  planOf,
  type Templates,
} from './plan.js'

/** The most files one request may carry, and fields (Gotenberg's clients send one per option). */
const MAX_FILES = 100
const MAX_FIELDS = 200
/** A field's most bytes (extraHttpHeaders, cookies and metadata are the long ones Gotenberg takes). */
const MAX_FIELD_BYTES = 1024 * 1024

/**
 * The key as Gotenberg's clients send it: the password of HTTP Basic (their basic-auth
 * settings; any user name), a Bearer token or `X-Api-Key` (their custom headers).
 */
export const GOTENBERG_KEY: KeyPresentation = {
  read(ctx) {
    const auth = ctx.get('Authorization')
    const bearer = /^Bearer (\S+)$/.exec(auth)
    if (bearer) return bearer[1]
    const basic = /^Basic ([A-Za-z0-9+/=]{1,1024})$/.exec(auth)
    if (basic) {
      const pair = Buffer.from(basic[1], 'base64').toString('utf8')
      const colon = pair.indexOf(':')
      return colon < 0 ? undefined : pair.slice(colon + 1)
    }
    const apiKey = ctx.get('X-Api-Key')
    return apiKey === '' ? undefined : apiKey
  },
  missing: 'Send your dutil API key as the password of HTTP Basic authentication, as a Bearer token or as X-Api-Key.',
  challenge: () => ({ 'WWW-Authenticate': 'Basic realm="dutil", charset="UTF-8"' }),
}

/** A request's route for the metrics and the access log: the path of a Gotenberg route, else undefined. */
export const gotenbergRouteOf = (path: string): string | undefined =>
  path in GOTENBERG_ROUTES || path === '/health' || path === '/version' ? path : undefined

/** Whether a path is one of the Gotenberg routes (their errors are plain text, as Gotenberg's). */
export const isGotenbergPath = (path: string) => path.startsWith('/forms/') || path === '/health' || path === '/version'

export interface GotenbergDeps extends RouteDeps {
  keys: KeyRegistry
  keyUsage?: KeyUsage
  limiter: RateLimiter
  isReady: () => Promise<string | null>
}

/** What /version answers: the Gotenberg API these routes follow, and who serves them. */
export const GOTENBERG_VERSION_ANSWER = '8 (dutil: Gotenberg routes)'

/**
 * Gotenberg's routes for what dutil does (docs/gotenberg.md): each request is read as Gotenberg
 * reads its form, planned as dutil jobs of the calling key (planOf), run through the one accept
 * path as sync runs, and answered as Gotenberg answers: the PDF's bytes, or a zip of several.
 */
export function gotenbergRoutes(deps: GotenbergDeps): Middleware {
  const auth = authenticate(deps.keys, deps.keyUsage, GOTENBERG_KEY)
  const limit = rateLimit(deps.limiter)
  return async (ctx: Context, next: Next) => {
    if (ctx.path === '/health' && (ctx.method === 'GET' || ctx.method === 'HEAD')) return health(ctx, deps)
    if (ctx.path === '/version' && ctx.method === 'GET') {
      ctx.type = 'text/plain; charset=utf-8'
      return void (ctx.body = GOTENBERG_VERSION_ANSWER)
    }
    const route = (GOTENBERG_ROUTES as Record<string, GotenbergRoute>)[ctx.path]
    if (!route) return next()
    if (ctx.method !== 'POST') throw new ApiError('not_found', `No route ${ctx.method} ${ctx.path}.`)
    const trace = ctx.get('Gotenberg-Trace') || (ctx.state.requestId as string)
    ctx.set('Gotenberg-Trace', trace.slice(0, 200))
    await auth(ctx, () => limit(ctx, () => convert(ctx, deps, route)))
  }
}

/** Gotenberg's health answer, from the gateway's readiness and whether each engine's utilities are on. */
async function health(ctx: Context, deps: GotenbergDeps): Promise<void> {
  const problem = await deps.isReady()
  const at = new Date().toISOString()
  const module = (slugs: string[]) => ({
    status: !problem && slugs.some((s) => enabledUtility(s)) ? 'up' : 'down',
    timestamp: at,
  })
  const details = { chromium: module(['html-pdf']), libreoffice: module(['office-pdf']) }
  const up = !problem && Object.values(details).every((d) => d.status === 'up')
  ctx.status = up ? 200 : 503
  ctx.body = { status: up ? 'up' : 'down', details }
}

async function convert(ctx: Context, deps: GotenbergDeps, route: GotenbergRoute): Promise<void> {
  if (!isMultipart(ctx))
    throw invalid('Send the request as multipart/form-data, as Gotenberg takes it.', [
      { path: 'Content-Type', message: 'must be multipart/form-data' },
    ])
  for (const header of ['Gotenberg-Webhook-Url', 'Gotenberg-Webhook-Error-Url', 'Gotenberg-Webhook-Events-Url'])
    if (ctx.get(header))
      throw invalid(
        `${header} is not supported by dutil: run the job on POST /v1/utilities/{slug}/jobs with a callbackUrl for a signed callback.`,
        [{ path: header, message: 'is not supported' }],
      )
  const key = ctx.state.key as AuthenticatedKey
  const { fields, files, templates, stored } = await readGotenbergForm(ctx, deps, key, route.startsWith('chromium'))
  let plan
  try {
    plan = planOf(route, fields, files, templates)
  } catch (err) {
    if (err instanceof FormRefused)
      throw invalid(`Invalid form data: ${err.message}`, [{ path: err.field, message: err.message }])
    throw err
  }
  const metadata = { gotenbergRoute: ctx.path }
  const done = await Promise.all(plan.runs.map((run) => runOne(ctx, deps, key, run, metadata, stored)))
  if (plan.facts) {
    const named = done.map((d) => ({ name: d.run.name ?? `${d.run.stem}.pdf`, d }))
    const answers =
      plan.facts === 'metadata'
        ? named.map(({ name, d }) => [name, gotenbergMetadataOf(name, d.facts)])
        : await Promise.all(named.map(async ({ name, d }) => [name, await storedBookmarks(deps, name, d)]))
    ctx.status = 200
    ctx.body = Object.fromEntries(answers)
    return
  }
  let outputs: AnswerFile[]
  if (plan.merge) {
    const merged = await runOne(
      ctx,
      deps,
      key,
      {
        utility: 'merge-pdf',
        input: { files: done.map((d) => ({ url: s3UrlOf(d.files[0].key, deps.bucket) })) },
        stem: 'merged',
      },
      metadata,
    )
    outputs = [
      { key: merged.files[0].key, name: 'merged.pdf', size: merged.files[0].size, contentType: 'application/pdf' },
    ]
  } else {
    outputs = done.flatMap((d) =>
      d.files.map((f, i) => ({
        key: f.key,
        name: `${plan.split ? `${d.run.stem}_${i}` : d.run.stem}.${d.run.extension ?? 'pdf'}`,
        size: f.size,
        contentType: f.contentType ?? 'application/pdf',
      })),
    )
  }
  await answerFiles(ctx, deps, outputs, ctx.get('Gotenberg-Output-Filename'))
}

/**
 * The form as Gotenberg reads it: every file part (whatever its field's name) stored as an upload
 * of the key, one batch; every field by name (the first of repeated ones).
 */
async function readGotenbergForm(
  ctx: Context,
  deps: GotenbergDeps,
  key: AuthenticatedKey,
  /** Chromium's routes take header.html and footer.html as templates, read here, not stored. */
  takesTemplates: boolean,
): Promise<{
  fields: Map<string, string>
  files: FormFile[]
  templates: Templates
  /** The uploads the form stored, by id: the key's own, known without a read (acceptRun). */
  stored: ReadonlyMap<string, string>
}> {
  const fields = new Map<string, string>()
  const files: FormFile[] = []
  const stored = new Map<string, string>()
  const templates: Templates = {}
  const nextId = newFileBatch()
  await readForm(
    ctx,
    { files: MAX_FILES, fields: MAX_FIELDS, fieldBytes: MAX_FIELD_BYTES, noun: 'A Gotenberg route' },
    {
      file: async (field, name, stream) => {
        const template = takesTemplates ? TEMPLATE_FILES[name.toLowerCase()] : undefined
        if (template) {
          templates[template] = await readTemplate(name, stream)
          return
        }
        if (files.some((f) => f.name === name))
          throw invalid(`Invalid form data: form file '${name}' is given twice`, [
            { path: name, message: 'is given twice' },
          ])
        const upload = await deps.uploads.store({
          apiKeyId: key.id,
          name,
          expirySeconds: deps.uploads.settings.defaultExpirySeconds,
          body: stream,
          nextId,
        })
        stored.set(upload.id, upload.storageKey)
        files.push({ field, name, url: s3UrlOf(upload.storageKey, deps.bucket) })
      },
      field: (field, value) => {
        if (!fields.has(field)) fields.set(field, value)
      },
    },
  )
  return { fields, files, templates, stored }
}

const TEMPLATE_FILES: Record<string, keyof Templates> = { 'header.html': 'header', 'footer.html': 'footer' }
/** A template's most bytes as sent (its characters are checked by html-pdf's schema). */
const MAX_TEMPLATE_BYTES = 256 * 1024

async function readTemplate(name: string, stream: AsyncIterable<Buffer>): Promise<string> {
  const bytes = await readAtMost(stream, MAX_TEMPLATE_BYTES, () =>
    invalid(`Invalid form data: form file '${name}' is larger than ${MAX_TEMPLATE_BYTES / 1024} KiB`, [
      { path: name, message: 'is too large' },
    ]),
  )
  return bytes.toString('utf8')
}

interface Done {
  run: PlannedRun
  job: UtilityJobResource
  files: Array<{ key: string; size: number | null; contentType: string | null }>
  /** The result's facts beside its files (pageCount, pdf-info's). */
  facts: Record<string, unknown>
}

/** One planned job of the key, run as a sync run: its output files, or the error it is answered with. */
async function runOne(
  ctx: Context,
  deps: GotenbergDeps,
  key: AuthenticatedKey,
  run: PlannedRun,
  metadata: Record<string, unknown>,
  stored?: ReadonlyMap<string, string>,
): Promise<Done> {
  const utility = usableUtility(run.utility, key)
  const request = { input: run.input, metadata }
  validateRunRequest(request, utility, 'sync')
  const accepted = await acceptRun(ctx, deps, { utility, key, mode: 'sync', request, stored })
  if (accepted.kind !== 'created') throw new Error('a run without an Idempotency-Key found an earlier job')
  // Every job of the request, as each is accepted: a failed answer names them too.
  const ids: string[] = (ctx.state.gotenbergJobIds ??= [])
  ids.push(accepted.job.spec.jobId)
  ctx.set('Dutil-Job-Id', ids.join(', '))
  const job = await waitForSyncRun(ctx, deps, accepted.job)
  const status = effectiveStatus(job)
  const id = job.spec.jobId
  if (status.state === 'failed') {
    const code = (status.error?.code ?? 'internal') as JobErrorCode
    throw new ApiError(code, `${status.error?.message ?? 'The job failed.'} (job ${id})`)
  }
  if (status.state === 'cancelled') throw new ApiError('conflict', `The job was cancelled (job ${id}).`)
  if (status.state !== 'succeeded') {
    deps.log.info({ ...requestLogFields(ctx), jobId: id }, 'gotenberg route answered before its job finished')
    throw new ApiError(
      'upstream_timeout',
      `The request exceeded the time limit; the job goes on: GET /v1/jobs/${id} with the same key.`,
    )
  }
  // A status keeps a bounded number of files; the job record keeps them all.
  let files = status.result?.files ?? []
  if (status.result?.filesOmitted) {
    const recorded = await deps.reader.find(id)
    files = (recorded && effectiveStatus(recorded).result?.files) || files
  }
  return {
    run,
    job,
    files: files.map((f) => ({ key: f.key, size: f.size ?? null, contentType: f.contentType ?? null })),
    facts: { ...status.result?.extras },
  }
}

/** The most bytes of a bookmarks.json a runner stored that the gateway reads (10,000 bookmarks of long titles). */
const MAX_BOOKMARKS_BYTES = 16 * 1024 * 1024

/** The bookmarks a pdf-info run stored, read within a size and depth bound (a runner wrote them). */
async function storedBookmarks(deps: GotenbergDeps, name: string, d: Done): Promise<unknown> {
  const id = d.job.spec.jobId
  if (d.facts.passwordRequired === true)
    throw new ApiError('upstream_rejected', `${name} needs a password to be read: its bookmarks cannot be (job ${id}).`)
  const file = d.files.find((f) => f.key.endsWith('/bookmarks.json'))
  if (!file) throw new Error(`pdf-info job ${id} stored no bookmarks.json`)
  return readJsonObject<unknown>(deps.storage, deps.bucket, file.key, MAX_BOOKMARKS_BYTES, 128)
}
