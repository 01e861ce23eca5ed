import { requestLogFields } from '../../request-id.js'
import Router from '@koa/router'
import type { Context } from 'koa'
import { DEFAULT_RATE_LIMIT, EXPIRY_DAYS } from '../../../contract/api-keys.js'
import { CONTRACT_SLUGS } from '../../../contract/utility.js'
import type { ApiKeyResource } from '../../../contract/crd-schemas.js'
import { ulidOf } from '../../../contract/ids.js'
import { apiStatus } from '../../../platform/kube.js'
import { parseTime } from '../../../contract/time.js'
import { ApiError, invalid } from '../../api-error.js'
import { authorize, Fields, jsonBody, type ConsoleState } from '../http.js'
import { can } from '../permissions.js'
import type { ConsoleDeps } from './deps.js'
import type { KeyItem, KeyList } from '../ui/api-types.js'

export const MAX_RATE_LIMIT = 100_000

export function ownsKey(s: ConsoleState, key: ApiKeyResource): boolean {
  return key.spec.createdBy?.userId === s.user.spec.userId
}

export function keyStatus(key: ApiKeyResource, now = Date.now()): 'active' | 'revoked' | 'expired' {
  if (key.spec.revokedAt) return 'revoked'
  const exp = parseTime(key.spec.expiresAt)
  return exp !== null && exp <= now ? 'expired' : 'active'
}

export function keyView(key: ApiKeyResource, s: ConsoleState): KeyItem {
  const own = ownsKey(s, key)
  const role = s.user.spec.role
  return {
    id: key.spec.keyId,
    name: key.spec.name,
    prefix: key.spec.prefix,
    utilities: key.spec.utilities,
    rateLimitPerMinute: key.spec.rateLimitPerMinute,
    createdAt: key.spec.createdAt,
    expiresAt: key.spec.expiresAt,
    revokedAt: key.spec.revokedAt,
    lastUsedAt: key.status?.lastUsedAt ?? null,
    status: keyStatus(key),
    createdBy: key.spec.createdBy?.email ?? null,
    /** What this person may do with it (the server checks again on every call). */
    can: {
      revoke: can(role, 'keys.revoke', own ? 'own' : 'other'),
      revealSecret: can(role, 'keys.secret.reveal', own ? 'own' : 'other'),
      rotateSecret: can(role, 'keys.secret.rotate', own ? 'own' : 'other'),
      setRateLimit: can(role, 'keys.rateLimit.set', own ? 'own' : 'other'),
    },
  }
}

/** The keys a person sees: all for staff, their own for externals. Active first, then revoked. */
export async function visibleKeys(d: ConsoleDeps, s: ConsoleState): Promise<ApiKeyResource[]> {
  const all = await d.keyAdmin.list()
  return can(s.user.spec.role, 'keys.read', 'other') ? all : all.filter((k) => ownsKey(s, k))
}

async function keyFor(
  ctx: Context,
  d: ConsoleDeps,
  action: 'keys.revoke' | 'keys.secret.reveal' | 'keys.secret.rotate' | 'keys.rateLimit.set',
): Promise<ApiKeyResource> {
  const s = authorize(ctx, action, 'own')
  const id = ctx.params.id as string
  const key = ulidOf(id, 'key') ? (await d.keyAdmin.list()).find((k) => k.spec.keyId === id) : undefined
  // Keys a person may not see answer 404, as if they did not exist.
  if (!key || !can(s.user.spec.role, 'keys.read', ownsKey(s, key) ? 'own' : 'other'))
    throw new ApiError('not_found', `No API key ${JSON.stringify(id.slice(0, 60))}.`)
  authorize(ctx, action, ownsKey(s, key) ? 'own' : 'other')
  return key
}

export function keyRoutes(d: ConsoleDeps): Router {
  const r = new Router({ prefix: '/console/api/keys' })

  r.get('/', async (ctx) => {
    const s = authorize(ctx, 'keys.read', 'own')
    const keys = await visibleKeys(d, s)
    ctx.body = {
      items: keys.map((k) => keyView(k, s)),
      defaults: {
        rateLimitPerMinute: DEFAULT_RATE_LIMIT,
        expiryDays: [...EXPIRY_DAYS],
        utilities: [...CONTRACT_SLUGS],
      },
    } satisfies KeyList
  })

  r.post('/', async (ctx) => {
    const s = authorize(ctx, 'keys.create', 'own')
    const body = await jsonBody(ctx)
    const f = new Fields(body)
    const name = f.string('name', { required: true, max: 200 })
    const utilities = body.utilities
    let list: string[] = []
    if (utilities !== undefined && utilities !== 'all') {
      if (
        !Array.isArray(utilities) ||
        utilities.length === 0 ||
        utilities.some((u) => !(CONTRACT_SLUGS as readonly string[]).includes(u as string))
      ) {
        f.problems.push({
          path: 'utilities',
          message: `must be "all" or a non-empty list of ${CONTRACT_SLUGS.join(', ')}`,
        })
      } else list = [...new Set(utilities as string[])]
    }
    const expires = body.expiresInDays
    if (expires !== undefined && expires !== null && !(EXPIRY_DAYS as readonly unknown[]).includes(expires))
      f.problems.push({ path: 'expiresInDays', message: 'must be null (never), 30, 90 or 365' })
    const rate = body.rateLimitPerMinute
    if (rate !== undefined && rate !== null) {
      if (!can(s.user.spec.role, 'keys.rateLimit.set', 'own'))
        throw new ApiError('forbidden', 'Your keys get the default rate limit; ask staff to raise it.')
      if (!Number.isInteger(rate) || (rate as number) < 1 || (rate as number) > MAX_RATE_LIMIT)
        f.problems.push({ path: 'rateLimitPerMinute', message: `must be a whole number from 1 to ${MAX_RATE_LIMIT}` })
    }
    f.check()
    // Key churn is bounded per person and day (each key is an entry of the signing Secret until
    // its revocation is swept): counted in Redis across replicas, failing open while it is down.
    const perDay = d.config.limits.keysPerDay
    const today = await d.counters.hit(
      `keys-created:${s.user.spec.userId}`,
      Date.now(),
      requestLogFields(ctx),
      86_400_000,
    )
    if (today && today.count > perDay) {
      throw new ApiError(
        'rate_limited',
        `A person may create ${perDay} API keys a day; try again tomorrow.`,
        undefined,
        { 'Retry-After': String(Math.max(1, Math.ceil(today.resetMs / 1000))) },
      )
    }
    const create = () =>
      d.keyAdmin.create({
        name: name!,
        utilities: list,
        rateLimitPerMinute: (rate as number | undefined) ?? undefined,
        expiresInDays: (expires as number | null | undefined) ?? undefined,
        createdBy: { userId: s.user.spec.userId, email: s.user.spec.email },
      })
    // External people hold a bounded number of active keys: counted and created one request at
    // a time per person, so concurrent creates cannot pass the cap together.
    const created =
      s.user.spec.role === 'external'
        ? await d.mutex.with(`console:mutex:keys:${s.user.spec.userId}`, async () => {
            const now = Date.now()
            const active = (await d.keyAdmin.list()).filter(
              (k) => ownsKey(s, k) && !k.spec.revokedAt && !(k.spec.expiresAt && Date.parse(k.spec.expiresAt) <= now),
            ).length
            const cap = d.config.limits.maxKeysPerExternal
            if (active >= cap)
              throw new ApiError(
                'conflict',
                `External members may hold ${cap} active API keys; revoke one before creating another.`,
              )
            return create()
          })
        : await create()
    d.log.info({ keyId: created.id, userId: s.user.spec.userId }, 'API key created in the console')
    ctx.status = 201
    ctx.body = created
  })

  r.post('/:id/revoke', async (ctx) => {
    const key = await keyFor(ctx, d, 'keys.revoke')
    if (key.spec.revokedAt) throw new ApiError('conflict', 'This key is already revoked.')
    const revoked = await d.keyAdmin.revoke(key.spec.keyId)
    ctx.body = keyView(revoked, ctx.state.console)
  })

  r.patch('/:id', async (ctx) => {
    const key = await keyFor(ctx, d, 'keys.rateLimit.set')
    const body = await jsonBody(ctx)
    const rate = body.rateLimitPerMinute
    if (!Number.isInteger(rate) || (rate as number) < 1 || (rate as number) > MAX_RATE_LIMIT) {
      throw invalid(`rateLimitPerMinute must be a whole number from 1 to ${MAX_RATE_LIMIT}.`, [
        { path: 'rateLimitPerMinute', message: `must be a whole number from 1 to ${MAX_RATE_LIMIT}` },
      ])
    }
    ctx.body = keyView(await d.keyAdmin.setRateLimit(key.spec.keyId, rate as number), ctx.state.console)
  })

  // Secrets are POSTs: never cached, never prefetched, and they need the CSRF token.
  r.post('/:id/secret/reveal', async (ctx) => {
    const key = await keyFor(ctx, d, 'keys.secret.reveal')
    if (key.spec.revokedAt) throw new ApiError('conflict', 'This key is revoked: it has no signing secret any more.')
    ctx.body = await d.keyAdmin.revealSecret(key.spec.keyId)
    ctx.set('Cache-Control', 'no-store')
  })

  r.post('/:id/secret/rotate', async (ctx) => {
    const key = await keyFor(ctx, d, 'keys.secret.rotate')
    if (key.spec.revokedAt) throw new ApiError('conflict', 'This key is revoked: it has no signing secret any more.')
    try {
      ctx.body = await d.keyAdmin.rotateSecret(key.spec.keyId)
    } catch (err) {
      if (apiStatus(err) === 404) throw new ApiError('not_found', 'No such key.')
      throw err
    }
    ctx.set('Cache-Control', 'no-store')
  })
  return r
}
