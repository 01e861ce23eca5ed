import { createHash } from 'node:crypto'
import type http from 'node:http'
import {
  AuthenticationV1Api,
  KubeConfig,
  makeInformer,
  Watch,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node'
import type { Logger } from 'pino'

/** Kubeconfig from a file when given, else in-cluster, else the default locations. */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig()
  if (path) kc.loadFromFile(path)
  else if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster()
  else kc.loadFromDefault()
  return reuseConnections(kc)
}

type AgentFactory = (cluster: unknown, options: Record<string, unknown>) => http.Agent
type HttpsOptions = Record<string, unknown> & { headers?: Record<string, string> }

/** How long the TLS material read for requests (CA, client certificate and key) is reused before it is read again. */
const TLS_MATERIAL_MS = 10_000

/**
 * client-node 1.x makes a new https.Agent for every request: each API call pays a TCP and TLS
 * handshake and a new SecureContext (the CPU profile of the accept path showed TLS set-up as its
 * largest cost). One keep-alive agent per distinct set of TLS options is made instead and reused;
 * credentials travel in headers, so a refreshed token still applies. It also reads the CA file
 * (or decodes the inline CA, certificate and key) for every request: that is read once per
 * TLS_MATERIAL_MS instead, so a rotated file still applies within seconds (the operator's
 * profile showed the reads and the agent lookup at ~5 % of its CPU).
 */
export function reuseConnections(kc: KubeConfig, now: () => number = () => performance.now()): KubeConfig {
  const target = kc as unknown as {
    createAgent: AgentFactory
    applyHTTPSOptions: (opts: HttpsOptions) => void
  }
  const originalAgent = target.createAgent.bind(kc) as AgentFactory
  const originalHttps = target.applyHTTPSOptions.bind(kc)
  let material: { at: number; opts: HttpsOptions } | undefined
  target.applyHTTPSOptions = (opts) => {
    if (!material || now() - material.at > TLS_MATERIAL_MS) {
      const fresh: HttpsOptions = {}
      originalHttps(fresh)
      material = { at: now(), opts: fresh }
    }
    const { headers, ...rest } = material.opts
    Object.assign(opts, rest)
    // Headers are the request's own (the authorization header is added to them next).
    if (headers) opts.headers = { ...opts.headers, ...headers }
  }
  const agents = new Map<string, http.Agent>()
  // The same TLS material (the same objects while it is reused) maps to the same agent without hashing it again.
  let last: { inputs: unknown[]; id: string } | undefined
  target.createAgent = (cluster, options) => {
    const inputs = [
      (cluster as { server?: string } | undefined)?.server,
      options.ca,
      options.cert,
      options.key,
      options.pfx,
      options.servername,
      options.rejectUnauthorized,
    ]
    let id: string
    if (last && last.inputs.every((v, i) => v === inputs[i])) id = last.id
    else {
      const hash = createHash('sha256')
      for (const v of inputs) {
        if (v instanceof Uint8Array || typeof v === 'string') hash.update(v)
        else if (v !== undefined && v !== null) hash.update(JSON.stringify(v))
        hash.update('\0')
      }
      id = hash.digest('hex')
      last = { inputs, id }
    }
    let agent = agents.get(id)
    if (!agent) {
      agent = originalAgent(cluster, { ...options, keepAlive: true, maxSockets: 64 })
      agents.set(id, agent)
    }
    return agent
  }
  return kc
}

/**
 * Who the API server takes this program for (a SelfSubjectReview), e.g.
 * `system:serviceaccount:dutil:dutil-operator`; logged at start so RBAC problems are easy to
 * place. Best effort: null when the review is unavailable.
 */
export async function kubeIdentity(kc: KubeConfig): Promise<string | null> {
  try {
    const review = await kc
      .makeApiClient(AuthenticationV1Api)
      .createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } })
    return review.status?.userInfo?.username ?? null
  } catch {
    return null
  }
}

/** HTTP status of a Kubernetes API error, or undefined for other errors. */
export function apiStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code
  return typeof code === 'number' ? code : undefined
}

export type CacheEvent = 'add' | 'update' | 'delete'

export interface WatchedCache<T extends KubernetesObject> {
  cache: ObjectCache<T>
  /** Resolves once the first list is in the cache. */
  synced: Promise<void>
  /** One more listener of every change (added before `synced`, it hears of every object). */
  on(listener: (event: CacheEvent, obj: T) => void): void
  stop(): Promise<void>
}

/**
 * A list+watch cache of one resource that keeps itself alive: when the watch ends with an
 * error it lists again after a short pause (level-triggered consumers see every object again).
 * Objects in the cache are shared: never mutate them.
 */
export function watchedCache<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  list: () => Promise<KubernetesListObject<T>>,
  log: Logger,
  onEvent: (event: CacheEvent, obj: T) => void = () => {},
  labelSelector?: string,
): WatchedCache<T> {
  // The informer's start resolves even when its list failed (it tells its error listeners and
  // gives up), so whether the list came back is noted here: `synced` means the objects are in.
  let listed = false
  let firstError: unknown
  const informer = makeInformer<T>(
    kc,
    path,
    async () => {
      const answer = await list()
      listed = true
      return answer
    },
    labelSelector,
  )
  let stopped = false
  const on = (listener: (event: CacheEvent, obj: T) => void) => {
    for (const ev of ['add', 'update', 'delete'] as const) informer.on(ev, (obj) => listener(ev, obj))
  }
  on(onEvent)
  informer.on('error', (err) => {
    if (stopped) return
    // Before the first list the start below retries, with back-off.
    if (!listed) return void (firstError = err)
    log.warn({ err: String(err), path }, 'watch ended, restarting')
    setTimeout(() => {
      if (!stopped) informer.start().catch((e) => log.error({ err: String(e), path }, 'watch restart failed'))
    }, 1000).unref()
  })
  const synced = (async () => {
    for (let attempt = 0; ; attempt++) {
      firstError = undefined
      try {
        await informer.start()
        if (listed || stopped) return
      } catch (err) {
        firstError = err
      }
      if (stopped) return
      log.warn({ err: String(firstError), path, attempt }, 'first list or watch failed, retrying')
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)))
    }
  })()
  return {
    cache: informer,
    synced,
    on,
    stop: async () => {
      stopped = true
      await informer.stop()
    },
  }
}

export interface EventWatch {
  /** Resolves once the watch has started (after its first list). */
  synced: Promise<void>
  stop(): Promise<void>
}

interface WatchHandlers<T> {
  /** Every added, changed or deleted object, as the API server sent it. */
  onEvent(event: CacheEvent, obj: T): void
  /** The watch started over from a new list: events in between may be missing. */
  onResync(): void
}

const CACHE_EVENT: Record<string, CacheEvent> = { ADDED: 'add', MODIFIED: 'update', DELETED: 'delete' }

/**
 * A watch that keeps nothing: each event is handed on and dropped. It starts from a one-object
 * list (for the collection's resourceVersion), resumes from the last resourceVersion it saw
 * (bookmarks included) when the connection ends, and lists again, calling `onResync`, when the
 * API server no longer has that version (410 Gone). For consumers that only need to hear of
 * changes, so memory does not grow with the number of objects.
 */
export function watchEvents<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  list: (limit: number) => Promise<KubernetesListObject<T>>,
  log: Logger,
  handlers: WatchHandlers<T>,
): EventWatch {
  const watch = new Watch(kc)
  let stopped = false
  let resourceVersion: string | undefined
  let current: AbortController | undefined
  let failures = 0
  let resolveSynced!: () => void
  const synced = new Promise<void>((r) => (resolveSynced = r))

  const restart = (delayMs: number) => {
    if (!stopped) setTimeout(() => void run(), delayMs).unref()
  }
  const run = async (): Promise<void> => {
    try {
      if (!resourceVersion) {
        resourceVersion = (await list(1)).metadata?.resourceVersion
        if (!resourceVersion) throw new Error('the list had no resourceVersion')
        handlers.onResync()
      }
      current = await watch.watch(
        path,
        { resourceVersion, allowWatchBookmarks: true },
        (type: string, obj: T & { code?: number }) => {
          if (type === 'ERROR') {
            // 410 Gone: the version is too old to resume from; list again.
            if (obj.code === 410) resourceVersion = undefined
            return
          }
          failures = 0
          resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion
          const event = CACHE_EVENT[type]
          if (event) handlers.onEvent(event, obj)
        },
        (err: unknown) => {
          if (stopped) return
          if ((err as { statusCode?: number } | null)?.statusCode === 410) resourceVersion = undefined
          if (err) {
            failures++
            log.warn({ err: String(err), path }, 'watch ended, resuming')
          }
          restart(err ? Math.min(5000, 250 * 2 ** Math.min(failures, 5)) : 0)
        },
      )
      resolveSynced()
    } catch (err) {
      if (stopped) return
      failures++
      log.warn({ err: String(err), path, attempt: failures }, 'watch could not start, retrying')
      restart(Math.min(5000, 250 * 2 ** Math.min(failures, 5)))
    }
  }
  void run()
  return {
    synced,
    stop: async () => {
      stopped = true
      current?.abort()
      resolveSynced()
    },
  }
}
