import Router from '@koa/router'
import { catalog } from '../../../runners/catalog.js'
import { newId } from '../../../contract/ids.js'
import { playgroundTenant, tenantCode } from '../../../contract/tenants.js'
import { utcDay } from '../../../contract/time.js'
import { acceptJob } from '../../accept-job.js'
import { ApiError, invalid } from '../../api-error.js'
import { assertCallbackUrlAllowed } from '../../callback-url.js'
import { assertStorageInputsReadable } from '../../storage-inputs.js'
import { readJsonBody } from '../../json-body.js'
import { isMultipart } from '../../multipart-form.js'
import { readMultipartRun } from '../../multipart-run.js'
import { catalogEntry, utilityNamed } from '../../routes/utilities.js'
import { traceparentOf } from '../../../platform/tracing.js'
import { newJobSpec, type RunRequest, utilityJobResource } from '../../utility-job.js'
import { validateRunRequest } from '../../validation.js'
import { authorize } from '../http.js'
import { can } from '../permissions.js'
import { dayRange, summarizeUsage } from '../usage.js'
import { ownKeyIds } from './jobs.js'
import type { ConsoleDeps } from './deps.js'
import type { Usage, Utility } from '../ui/api-types.js'

/** Whom the playground's files belong to: the person, never a key (no key's job or list sees them). */
export const playgroundUploadOwner = (userId: string) => `playground:${userId}`

export const USAGE_RANGES = [7, 30, 90, 365] as const

/** Utilities, usage, the playground and the workspace signing secret. */
export function workspaceRoutes(d: ConsoleDeps): Router {
  const r = new Router({ prefix: '/console/api' })

  r.get('/utilities', (ctx) => {
    authorize(ctx, 'playground.run', 'own')
    ctx.body = { items: [...catalog.values()].filter((u) => u.enabled).map(catalogEntry) } satisfies {
      items: Utility[]
    }
  })

  r.get('/usage', async (ctx) => {
    const s = authorize(ctx, 'usage.read', 'own')
    const days = Number(ctx.query.days ?? 30)
    if (!(USAGE_RANGES as readonly number[]).includes(days))
      throw invalid('days must be 7, 30, 90 or 365.', [{ path: 'days', message: 'must be 7, 30, 90 or 365' }])
    const key = typeof ctx.query.key === 'string' && ctx.query.key ? ctx.query.key : undefined
    const utility = typeof ctx.query.utility === 'string' && ctx.query.utility ? ctx.query.utility : undefined
    const now = Date.now()
    const range = dayRange(utcDay(now - (days - 1) * 86_400_000), utcDay(now))
    let rows = await d.records.usage(range[0], range[range.length - 1])
    if (!can(s.user.spec.role, 'usage.read', 'other')) {
      const own = ownKeyIds(d, s)
      rows = rows.filter((row) =>
        row.source === 'playground' ? row.userEmail === s.user.spec.email : own.has(row.keyId),
      )
    }
    if (key) rows = rows.filter((row) => (key === 'playground' ? row.source === 'playground' : row.keyId === key))
    if (utility) rows = rows.filter((row) => row.utility === utility)
    ctx.body = { from: range[0], to: range[range.length - 1], ...summarizeUsage(rows, range) } satisfies Usage
  })

  // Playground: an async job with no key, source playground and the person's e-mail. Its
  // callback (if any) is signed with the playground secret (made here on first use).
  r.post('/playground/:slug', async (ctx) => {
    const s = authorize(ctx, 'playground.run', 'own')
    // Each person's playground runs are limited per minute like a key's requests (fail open while Redis is down).
    const limit = d.config.limits.playgroundRunsPerMinute
    const window = await d.counters.hit(`playground:${s.user.spec.userId}`, Date.now())
    if (window && window.count > limit) {
      throw new ApiError('rate_limited', `Playground runs are limited to ${limit} a minute per person.`, undefined, {
        'Retry-After': String(Math.max(1, Math.ceil(window.resetMs / 1000))),
      })
    }
    const utility = utilityNamed(ctx.params.slug)
    // The form's files (multipart) are uploads of the person's own, readable by their playground runs only.
    const uploadOwner = playgroundUploadOwner(s.user.spec.userId)
    const body = isMultipart(ctx)
      ? (await readMultipartRun(ctx, d.uploads, uploadOwner, utility)).body
      : await readJsonBody(ctx)
    validateRunRequest(body, utility, 'async')
    assertCallbackUrlAllowed(body)
    const req = body as RunRequest
    // Playground runs chain only the same person's playground outputs and files.
    const storageInputKeys = await assertStorageInputsReadable(req.input, {
      bucket: d.bucket,
      find: (id) => d.reader.find(id),
      owns: (job) => job.spec.source === 'playground' && job.spec.userEmail === s.user.spec.email,
      upload: (id) => d.uploads.find(uploadOwner, id),
    })
    const now = Date.now()
    const jobId = newId('job', now, tenantCode(playgroundTenant(s.user.spec.email)))
    const spec = newJobSpec({
      jobId,
      now,
      utility: utility.slug,
      mode: 'async',
      owner: { kind: 'playground', email: s.user.spec.email },
      request: req,
      storageInputKeys,
    })
    const uj = utilityJobResource(spec, undefined, traceparentOf(ctx.state.traceContext))
    // Its callback is signed with the playground secret: there is one before the job exists.
    if (req.callbackUrl) await d.keyAdmin.ensurePlaygroundSecret()
    const created = (await acceptJob(d, uj, req.input)).job
    d.log.info({ jobId, utility: utility.slug, userId: s.user.spec.userId }, 'playground job accepted')
    ctx.status = 202
    ctx.body = await d.links.view(created)
  })

  // The two signing secrets without a key: the workspace's (keys made before per-key secrets)
  // and the playground's. Secrets are POSTs: never cached, never prefetched, CSRF-checked.
  const secrets = [
    {
      path: 'signing-secret',
      which: 'workspace',
      reveal: 'workspaceSecret.reveal',
      rotate: 'workspaceSecret.rotate',
      ensure: () => d.keyAdmin.ensureWorkspaceSecret(),
      renew: () => d.keyAdmin.rotateWorkspaceSecret(),
    },
    {
      path: 'playground-secret',
      which: 'playground',
      reveal: 'playgroundSecret.reveal',
      rotate: 'playgroundSecret.rotate',
      ensure: () => d.keyAdmin.ensurePlaygroundSecret(),
      renew: () => d.keyAdmin.rotatePlaygroundSecret(),
    },
  ] as const
  for (const secret of secrets) {
    r.post(`/workspace/${secret.path}/reveal`, async (ctx) => {
      authorize(ctx, secret.reveal, 'own')
      ctx.set('Cache-Control', 'no-store')
      ctx.body = { signingSecret: await secret.ensure() }
    })
    r.post(`/workspace/${secret.path}/rotate`, async (ctx) => {
      const s = authorize(ctx, secret.rotate)
      ctx.set('Cache-Control', 'no-store')
      ctx.body = { signingSecret: await secret.renew() }
      d.log.info({ userId: s.user.spec.userId, secret: secret.which }, 'signing secret rotated')
    })
  }
  return r
}
