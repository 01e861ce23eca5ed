import type { AllowedNetworks } from '../contract/address-policy.js'
import { trustForwardedHeadersFrom } from './forwarded.js'
import Koa, { type Context, type Middleware, type Next } from 'koa'
import type { Logger } from 'pino'
import { openApiDocument } from '../contract/openapi.js'
import { UTILITIES } from '../runners/catalog.js'
import { ApiError } from './api-error.js'
import { authenticate } from './auth.js'
import { errorMiddleware } from './error-middleware.js'
import type { KeyRegistry } from './key-registry.js'
import type { KeyUsage } from './key-usage.js'
import { rateLimit, type RateLimiter } from './rate-limit.js'
import { requestId, requestLogFields } from './request-id.js'
import { type RequestTraces, traceRequests } from './trace-requests.js'
import { exemplarOf } from '../platform/metrics-exposition.js'
import { spanFields } from '../platform/tracing.js'
import type { RouteDeps } from './routes/context.js'
import { fileRoutes } from './routes/files.js'
import { jobRoutes } from './routes/jobs.js'
import { runUtilityRoutes } from './routes/run-utility.js'
import { utilityRoutes } from './routes/utilities.js'
import { gotenbergRouteOf, gotenbergRoutes, isGotenbergPath } from './gotenberg/routes.js'

export interface AppDeps extends RouteDeps {
  keys: KeyRegistry
  keyUsage?: KeyUsage
  limiter: RateLimiter
  log: Logger
  isReady: () => Promise<string | null>
  /** The person-facing console under /console (gateway/console/); other paths pass through it. */
  console?: Middleware
  /** Proxies whose X-Forwarded-* headers are believed (gateway/forwarded.ts). */
  trustedProxies?: AllowedNetworks
  /** The trace of each request in flight, for its log lines (gateway/trace-requests.ts). */
  requestTraces?: RequestTraces
  /** Peers whose traceparent keeps its sampling decision. */
  trustedTraceParents?: AllowedNetworks
  /** Serve Gotenberg's routes for its clients (gateway/gotenberg/): off unless asked for. */
  gotenbergRoutes?: boolean
}

const OPERATIONAL_PATHS = new Set(['/healthz', '/readyz', '/metrics'])

/**
 * Metrics and the access log: one JSON line per API request with its request id (and the job id
 * when the request concerns one, set by the route as `ctx.state.jobId`).
 */
function observeRequests(deps: AppDeps, routeOf: (ctx: Context) => string) {
  return async (ctx: Context, next: Next) => {
    const start = process.hrtime.bigint()
    try {
      await next()
    } finally {
      const route = routeOf(ctx)
      const seconds = Number(process.hrtime.bigint() - start) / 1e9
      deps.metrics.httpRequests.observe({
        labels: { method: ctx.method, route, status: String(ctx.status) },
        value: seconds,
        exemplarLabels: exemplarOf(spanFields(ctx.state.traceContext).trace_id),
      })
      if (!OPERATIONAL_PATHS.has(ctx.path)) {
        deps.log.info(
          {
            ...requestLogFields(ctx),
            ...(ctx.state.jobId ? { jobId: ctx.state.jobId } : {}),
            method: ctx.method,
            route,
            status: ctx.status,
            ms: Math.round(seconds * 1000),
          },
          'request',
        )
      }
    }
  }
}

/** The gateway's HTTP surface: operational endpoints, then /v1 behind auth and rate limiting. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa()
  // Koa reads X-Forwarded-*; the first middleware removes them unless a trusted proxy sent them.
  app.proxy = true
  const v1 = [runUtilityRoutes(deps), jobRoutes(deps), fileRoutes(deps), utilityRoutes()]
  // The route pattern of a request, also when auth or rate limiting answered before routing.
  const routeOf = (ctx: Context): string => {
    const matched = (ctx as Context & { _matchedRoute?: string })._matchedRoute
    if (matched) return String(matched)
    if (OPERATIONAL_PATHS.has(ctx.path) || ctx.path === '/v1/openapi.json') return ctx.path
    const gotenberg = deps.gotenbergRoutes ? gotenbergRouteOf(ctx.path) : undefined
    if (gotenberg) return gotenberg
    for (const r of v1) {
      const m = r.match(ctx.path, ctx.method)
      if (m.route) return m.pathAndMethod[m.pathAndMethod.length - 1].path as string
    }
    return 'unmatched'
  }
  app.use(trustForwardedHeadersFrom(deps.trustedProxies))
  // The request's span covers everything after it, the access log line included.
  app.use(traceRequests(routeOf, deps.requestTraces, deps.trustedTraceParents))
  // Outermost after it, so metrics and the access log see the status the error mapping chose.
  app.use(observeRequests(deps, routeOf))
  const plainText = deps.gotenbergRoutes ? (ctx: Context) => isGotenbergPath(ctx.path) : undefined
  app.use(errorMiddleware(deps.log, routeOf, plainText))
  app.use(requestId)
  // From here every line logged with the request id carries the request's trace.
  if (deps.requestTraces) app.use(deps.requestTraces.track)
  app.use(async (ctx, next) => {
    if (ctx.path === '/healthz') return void (ctx.body = { status: 'ok' })
    if (ctx.path === '/readyz') {
      const problem = await deps.isReady()
      ctx.status = problem ? 503 : 200
      return void (ctx.body = { status: problem ? 'unavailable' : 'ok', ...(problem ? { reason: problem } : {}) })
    }
    if (ctx.path === '/metrics') {
      const { contentType, body } = await deps.metrics.exposition.answer(ctx.get('accept'))
      ctx.type = contentType
      return void (ctx.body = body)
    }
    await next()
  })
  if (deps.console) app.use(deps.console)
  if (deps.gotenbergRoutes) app.use(gotenbergRoutes(deps))
  const auth = authenticate(deps.keys, deps.keyUsage)
  const limit = rateLimit(deps.limiter)
  // Every /v1 route needs the bearer key and counts against its rate limit.
  const openapi = openApiDocument(UTILITIES)
  app.use(async (ctx, next) => {
    if (ctx.path !== '/v1/openapi.json') return next()
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD')
      throw new ApiError('not_found', `No route ${ctx.method} ${ctx.path}.`)
    ctx.body = openapi
  })
  app.use((ctx, next) => (ctx.path.startsWith('/v1/') ? auth(ctx, () => limit(ctx, next)) : next()))
  // A method a path does not have is an unknown route: 404 not_found (the contract has no 405).
  for (const r of v1) app.use(r.routes())
  return app
}
