import type { InputSealingKey } from '../../platform/input-sealing-key.js'
import { CustomObjectsApi, type KubeConfig, type ObjectCache } from '@kubernetes/client-node'
import type { Redis } from 'ioredis'
import compose from 'koa-compose'
import type { Middleware } from 'koa'
import type { Client } from 'minio'
import type { Logger } from 'pino'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { API_GROUP, API_VERSION } from '../../contract/api-group.js'
import {
  CONSOLE_INVITE,
  CONSOLE_USER,
  type ConsoleInviteResource,
  type ConsoleUserResource,
} from '../../contract/console-resources.js'
import type { ApiKeyResource } from '../../contract/crd-schemas.js'
import { watchedCache } from '../../platform/kube.js'
import { ApiError } from '../api-error.js'
import type { FileLinks } from '../file-links.js'
import type { JobRecords } from '../job-records.js'
import type { JobReader } from '../job-reader.js'
import type { UtilityJobClient } from '../../platform/utility-job-client.js'
import type { GatewayMetrics } from '../metrics.js'
import type { ConsoleConfig } from './config.js'
import { limitAnonymous, loadSession, originCheck } from './http.js'
import { Lockout } from './lockout.js'
import { RedisMutex } from './redis-mutex.js'
import { RateLimiter } from '../rate-limit.js'
import { limitPasswordWork } from './passwords.js'
import { OidcRelyingParty } from './oidc.js'
import { PeopleStore } from '../../platform/people-store.js'
import { authRoutes } from './routes/auth.js'
import type { ConsoleDeps } from './routes/deps.js'
import { jobRoutes } from './routes/jobs.js'
import { keyRoutes } from './routes/keys.js'
import { peopleRoutes } from './routes/people.js'
import { workspaceRoutes } from './routes/workspace.js'
import { SessionStore } from './sessions.js'
import { uiRoutes } from './ui-assets.js'
import type { Uploads } from '../uploads.js'

export interface ConsoleOptions {
  kc: KubeConfig
  namespace: string
  redis: Redis
  jobs: UtilityJobClient
  reader: JobReader
  records: JobRecords
  metrics: GatewayMetrics
  keyCache: ObjectCache<ApiKeyResource>
  links: FileLinks
  storage: Client
  bucket: string
  /** Files the playground's form sends (stored as uploads of the person). */
  uploads: Uploads
  /** The key passwords in playground runs are sealed with. */
  sealing: InputSealingKey
  config: ConsoleConfig
  log: Logger
  /** API-server look-ups for what the watched caches miss, shared with unknown API keys. */
  lookupBudget?: { take(): boolean }
}

export interface Console {
  /** Everything under /console (UI and console API); other paths pass through. */
  middleware: Middleware
  synced: Promise<void>
  stop(): Promise<void>
}

/** The console's routes wired to their dependencies (a test can pass its own). */
export function consoleMiddleware(d: ConsoleDeps): Middleware {
  const routers = [authRoutes(d), keyRoutes(d), jobRoutes(d), workspaceRoutes(d), peopleRoutes(d)].map(
    (r) => r.routes() as unknown as Middleware,
  )
  const api = compose([
    originCheck(d.config.publicUrl),
    loadSession(d.sessions, d.people, d.config.insecureCookies),
    limitAnonymous(d.counters, d.config.limits.anonymousRequestsPerMinute),
    ...routers,
  ])
  const ui = uiRoutes(d.config).routes() as unknown as Middleware
  return async (ctx, next) => {
    if (ctx.path === '/console/api' || ctx.path.startsWith('/console/api/')) {
      ctx.set('Cache-Control', 'no-store')
      return api(ctx, next)
    }
    if (ctx.path === '/console' || ctx.path.startsWith('/console/')) return ui(ctx, next)
    return next()
  }
}

/** Builds the console: its caches (people, invites), stores and routes. */
export function createConsole(o: ConsoleOptions): Console {
  const custom = o.kc.makeApiClient(CustomObjectsApi)
  limitPasswordWork(o.config.passwordWork.concurrency, o.config.passwordWork.maxQueued)
  const watch = <T extends ConsoleUserResource | ConsoleInviteResource>(plural: string) =>
    watchedCache<T>(
      o.kc,
      `/apis/${API_GROUP}/${API_VERSION}/namespaces/${o.namespace}/${plural}`,
      () =>
        custom.listNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, namespace: o.namespace, plural }),
      o.log,
      () => {},
    )
  const users = watch<ConsoleUserResource>(CONSOLE_USER.plural)
  const invites = watch<ConsoleInviteResource>(CONSOLE_INVITE.plural)
  const deps: ConsoleDeps = {
    config: o.config,
    people: new PeopleStore(o.kc, o.namespace, { users: users.cache, invites: invites.cache }, o.lookupBudget),
    sessions: new SessionStore(o.redis),
    lockout: new Lockout(o.redis),
    mutex: new RedisMutex(o.redis),
    counters: new RateLimiter(o.redis, o.log),
    keyAdmin: new ApiKeyAdmin(o.kc, o.namespace),
    keyList: () => o.keyCache.list(o.namespace),
    jobs: o.jobs,
    reader: o.reader,
    records: o.records,
    metrics: o.metrics,
    links: o.links,
    storage: o.storage,
    bucket: o.bucket,
    uploads: o.uploads,
    sealing: o.sealing,
    oidc: o.config.oidc ? new OidcRelyingParty(o.config.oidc, `${o.config.publicUrl}/console/api/oidc/callback`) : null,
    log: o.log.child({ component: 'console' }),
  }
  const synced = Promise.all([users.synced, invites.synced]).then(() => undefined)
  return {
    middleware: o.config.off ? consoleOff(o.config.off) : consoleMiddleware(deps),
    synced,
    stop: async () => {
      await Promise.allSettled([users.stop(), invites.stop()])
    },
  }
}

/** Every console path answers 404 with the reason (the API is not affected). */
function consoleOff(reason: string): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/console' && !ctx.path.startsWith('/console/')) return next()
    throw new ApiError('not_found', reason)
  }
}
