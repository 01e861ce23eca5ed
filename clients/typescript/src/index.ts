import createClient, { type Client } from 'openapi-fetch'
import { randomUUID } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import {
  describeFailure,
  DutilConnectionError,
  type Job,
  JobFailedError,
  RateLimitedError,
  requestError,
  WaitTimeoutError,
} from './errors.js'
import type { components, paths } from './schema.js'

export * from './errors.js'
export type { components, paths, webhooks } from './schema.js'

export type JobSummary = components['schemas']['JobSummary']
/** An upload: a file of this key's own that its jobs name by `url` (POST /v1/files). */
export type Upload = components['schemas']['Upload']
/** A direct upload announced: where its parts go, and where to complete it. */
export type DirectUpload = components['schemas']['DirectUpload']
export type CatalogEntry = components['schemas']['CatalogEntry']
export type JobStatus = Job['status']

/** The utilities, from the API description: one `/v1/utilities/<slug>` route each. */
export type Utility = {
  [P in keyof paths]: P extends `/v1/utilities/${infer S}`
    ? S extends `${string}/${string}` | `{${string}}`
      ? never
      : S
    : never
}[keyof paths]

type RunBody<U extends Utility> = NonNullable<paths[`/v1/utilities/${U}`]['post']>['requestBody'] extends {
  content: { 'application/json': infer B }
}
  ? B
  : never
/** The `input` a utility takes (docs/openapi.yaml). */
export type InputOf<U extends Utility> = RunBody<U> extends { input: infer I } ? I : never

export interface ClientOptions {
  /** The gateway, e.g. https://dutil.example.com or http://127.0.0.1:8080. */
  baseUrl: string
  apiKey: string
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof fetch
  /**
   * Retries of a request that could not reach the API or got a 5xx or 429 error envelope, with
   * exponential back-off and jitter (a `Retry-After` is honoured). Reads and cancels are
   * retried; so are creates, which always carry an `Idempotency-Key` (one is made when you give
   * none), so a retry never makes a second job. Default 2.
   */
  maxRetries?: number
  /** The first back-off (ms), doubling per retry up to 8 s. Default 500. */
  retryBaseMs?: number
  /**
   * Longest time one HTTP request may take, in ms (a long-poll's own wait is added to it). Default:
   * none. A sync run() may wait 90 s for its answer: give it more than that.
   */
  timeoutMs?: number
}

export interface RequestOptions {
  metadata?: Record<string, unknown>
  /** Retries with the same key return the original job (at most 200 characters). Default: a new UUID per call. */
  idempotencyKey?: string
  requestId?: string
  signal?: AbortSignal
  /** This call's request timeout (ms), instead of the client's `timeoutMs`. */
  requestTimeoutMs?: number
  /** This call's retries, instead of the client's. */
  maxRetries?: number
}

/** What every call takes: a signal to abort it, and its own request timeout and retries. */
export interface CallOptions {
  signal?: AbortSignal
  requestTimeoutMs?: number
  maxRetries?: number
}

export interface WaitOptions {
  /** Give up waiting (the job goes on) after this long: WaitTimeoutError. Default: no limit. */
  timeoutMs?: number
  /** Called with the job after every poll: state, progress. */
  onUpdate?: (job: Job) => void
  /**
   * Longest single long-poll, in seconds (default and most 60). The API answers a long-poll when
   * the job finishes; a shorter poll sees progress on the way, at one request per poll.
   */
  pollSeconds?: number
  signal?: AbortSignal
  /** Each poll's request timeout (beyond its own wait) and retries, instead of the client's. */
  requestTimeoutMs?: number
  maxRetries?: number
}

export interface ListFilter {
  utility?: Utility
  status?: JobStatus
  /** Page size asked of the API (1–100). */
  pageSize?: number
}

/**
 * A file to upload: a local path (streamed from disk), its bytes (a Node.js Buffer is a
 * Uint8Array), a Blob, or a stream (a web ReadableStream, or any async iterable of bytes such as
 * a Node.js Readable). A path, bytes and a Blob are sent again on a retry; a stream is sent once.
 */
export type FileSource = string | Uint8Array | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>

export interface UploadOptions extends CallOptions {
  /** The file's name (one path segment). Default: a path's last segment, else `file`. */
  name?: string
  /** How long it is kept, in seconds (60 up to the service's maximum). Default: the service's (a day). */
  expiresInSeconds?: number
  /**
   * Send the file straight to storage (a direct upload: presigned parts, then complete) rather
   * than in one request to the API. Default: for a path, Blob or bytes of more than
   * {@link DIRECT_UPLOAD_THRESHOLD} bytes. A stream always goes through the API.
   */
  direct?: boolean
  /** Called as bytes are sent: after each part of a direct upload, and once at the end otherwise. */
  onProgress?: (sent: number, total: number | undefined) => void
}

/** Files larger than this (32 MiB) go straight to storage by default. */
export const DIRECT_UPLOAD_THRESHOLD = 32 * 1024 * 1024
/** Parts of a direct upload sent at once. */
const PARALLEL_PARTS = 4

const TERMINAL: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'cancelled'])
/** The API's longest long-poll. */
const LONG_POLL_SECONDS = 60

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(t)
      reject(signal.reason)
    })
  })

/**
 * A typed client for the dutil API. Every method either returns what the API answered or throws
 * a typed error: DutilRequestError subclasses for the error envelope (RateLimitedError carries
 * `retryAfter`), JobFailedError for a job that ran and failed, DutilConnectionError when the
 * server cannot be reached.
 */
export class DutilClient {
  private readonly api: Client<paths>

  constructor(private readonly options: ClientOptions) {
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/$/, ''),
      fetch: options.fetch,
      headers: { Authorization: `Bearer ${options.apiKey}` },
    })
  }

  /**
   * Runs a utility and resolves with the succeeded job. Uses the sync route; when the server
   * answers 202 (still running after 90 s) it long-polls the job until it finishes.
   */
  async run<U extends Utility>(utility: U, input: InputOf<U>, opts: RequestOptions & WaitOptions = {}): Promise<Job> {
    const { status, job } = await this.start(
      `/v1/utilities/${utility}`,
      { input, ...(opts.metadata ? { metadata: opts.metadata } : {}) },
      opts,
    )
    if (status === 202 || !TERMINAL.has(job.status)) return this.wait(job.id, opts)
    return finished(job)
  }

  /** Starts a utility as an async job and resolves at once with the queued job. */
  async submit<U extends Utility>(
    utility: U,
    input: InputOf<U>,
    opts: RequestOptions & { callbackUrl?: string } = {},
  ): Promise<Job> {
    const body = {
      input,
      ...(opts.metadata ? { metadata: opts.metadata } : {}),
      ...(opts.callbackUrl ? { callbackUrl: opts.callbackUrl } : {}),
    }
    return (await this.start(`/v1/utilities/${utility}/jobs`, body, opts)).job
  }

  async get(id: string, opts: CallOptions & { waitSeconds?: number } = {}): Promise<Job> {
    const r = await this.call(
      opts,
      (signal) =>
        this.api.GET('/v1/jobs/{id}', {
          params: { path: { id }, query: opts.waitSeconds ? { wait: opts.waitSeconds } : {} },
          signal,
        }),
      (opts.waitSeconds ?? 0) * 1000,
    )
    if (!r.data) throw requestError(r.response.status, r.error, r.response.headers)
    return r.data as Job
  }

  /**
   * Long-polls a job (`?wait=`) until it finishes: resolves with it when it succeeded, throws
   * JobFailedError when it failed or was cancelled. A 429 while polling waits `Retry-After`.
   */
  async wait(id: string, opts: WaitOptions = {}): Promise<Job> {
    const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs
    for (;;) {
      const left = deadline - Date.now()
      const waitSeconds = Math.max(
        0,
        Math.min(opts.pollSeconds ?? LONG_POLL_SECONDS, LONG_POLL_SECONDS, Math.floor(left / 1000)),
      )
      let job: Job
      try {
        job = await this.get(id, {
          waitSeconds,
          signal: opts.signal,
          requestTimeoutMs: opts.requestTimeoutMs,
          maxRetries: opts.maxRetries,
        })
      } catch (err) {
        if (err instanceof RateLimitedError) {
          await sleep((err.retryAfter ?? 1) * 1000, opts.signal)
          continue
        }
        throw err
      }
      opts.onUpdate?.(job)
      if (TERMINAL.has(job.status)) return finished(job)
      if (Date.now() >= deadline) throw new WaitTimeoutError(job)
      // The server answered before its wait ran out (a progress change, or wait=0): do not spin.
      if (waitSeconds === 0) await sleep(Math.min(1000, Math.max(0, deadline - Date.now())), opts.signal)
    }
  }

  /** This key's jobs, newest first, following `nextCursor` page by page. */
  async *list(filter: ListFilter = {}, opts: CallOptions = {}): AsyncGenerator<JobSummary> {
    let cursor: string | undefined
    do {
      const query = {
        ...(filter.utility ? { utility: filter.utility } : {}),
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.pageSize ? { limit: filter.pageSize } : {}),
        ...(cursor ? { cursor } : {}),
      }
      const r = await this.call(opts, (signal) => this.api.GET('/v1/jobs', { params: { query }, signal }))
      if (!r.data) throw requestError(r.response.status, r.error, r.response.headers)
      yield* r.data.items as JobSummary[]
      cursor = r.data.nextCursor ?? undefined
    } while (cursor)
  }

  /** Cancels a queued job (a running or finished one: ConflictError). Cancelling twice is harmless, so it is retried too. */
  async cancel(id: string, opts: CallOptions = {}): Promise<Job> {
    const r = await this.call(opts, (signal) =>
      this.api.POST('/v1/jobs/{id}/cancel', { params: { path: { id } }, signal }),
    )
    if (!r.data) throw requestError(r.response.status, r.error, r.response.headers)
    return r.data as Job
  }

  /** The utilities this key may call. */
  async utilities(opts: CallOptions = {}): Promise<CatalogEntry[]> {
    const r = await this.call(opts, (signal) => this.api.GET('/v1/utilities', { signal }))
    if (!r.data) throw requestError(r.response.status, r.error, r.response.headers)
    return r.data.items as CatalogEntry[]
  }

  /**
   * Uploads a file for this key's jobs and resolves with it: its `url` is the s3:// name a job's
   * input takes. The body streams; nothing is held whole in memory.
   */
  async uploadFile(source: FileSource, opts: UploadOptions = {}): Promise<Upload> {
    const { body, name, repeatable } = await fileBody(source)
    const size = body instanceof Blob ? body.size : body instanceof Uint8Array ? body.byteLength : undefined
    if (size !== undefined && size > 0 && (opts.direct ?? size > DIRECT_UPLOAD_THRESHOLD))
      return this.uploadDirect(
        body instanceof Blob ? body : new Blob([body as Uint8Array<ArrayBuffer>]),
        opts.name ?? name,
        opts,
      )
    const query = new URLSearchParams({ name: opts.name ?? name })
    if (opts.expiresInSeconds !== undefined) query.set('expiresInSeconds', String(opts.expiresInSeconds))
    const url = `${this.options.baseUrl.replace(/\/$/, '')}/v1/files?${query}`
    const send = this.options.fetch ?? fetch
    const r = await this.call({ ...opts, maxRetries: repeatable ? opts.maxRetries : 0 }, async (signal) => {
      const response = await send(url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${this.options.apiKey}`, 'Content-Type': 'application/octet-stream' },
        body: body as RequestInit['body'],
        signal,
        // A stream is sent as it is read.
        ...(repeatable ? {} : { duplex: 'half' }),
      } as RequestInit)
      const parsed = (await response.json().catch(() => undefined)) as unknown
      return response.ok ? { response, data: parsed } : { response, error: parsed }
    })
    if (!r.data) throw requestError(r.response.status, r.error, r.response.headers)
    opts.onProgress?.((r.data as Upload).size, size)
    return r.data as Upload
  }

  /**
   * A direct upload: announced with its size, its parts PUT straight to storage (a few at once,
   * each retried as any call is), then completed: storage holds exactly the file, and it is one.
   */
  private async uploadDirect(file: Blob, name: string, opts: UploadOptions): Promise<Upload> {
    const query = new URLSearchParams({ name, size: String(file.size) })
    if (opts.expiresInSeconds !== undefined) query.set('expiresInSeconds', String(opts.expiresInSeconds))
    const base = this.options.baseUrl.replace(/\/$/, '')
    const send = this.options.fetch ?? fetch
    const auth = { Authorization: `Bearer ${this.options.apiKey}` }
    const json = async (response: Response) => {
      const parsed = (await response.json().catch(() => undefined)) as unknown
      return response.ok ? { response, data: parsed } : { response, error: parsed }
    }
    const announced = await this.call(opts, async (signal) =>
      json(await send(`${base}/v1/files?${query}`, { method: 'POST', headers: auth, signal })),
    )
    if (!announced.data) throw requestError(announced.response.status, announced.error, announced.response.headers)
    const offer = announced.data as DirectUpload
    const tags: Array<{ partNumber: number; etag: string }> = []
    let sent = 0
    let next = 0
    const worker = async () => {
      while (next < offer.parts.length) {
        const part = offer.parts[next++]
        const start = (part.partNumber - 1) * offer.partSize
        const bytes = file.slice(start, Math.min(file.size, start + offer.partSize))
        const r = await this.call(opts, async (signal) => {
          const response = await send(part.url, { method: 'PUT', body: bytes, signal })
          return response.ok
            ? { response, data: response.headers.get('etag') ?? '' }
            : { response, error: await response.text().catch(() => '') }
        })
        if (r.data === undefined)
          throw requestError(
            r.response.status,
            { error: { code: 'storage_error', message: String(r.error) } },
            r.response.headers,
          )
        tags.push({ partNumber: part.partNumber, etag: r.data })
        sent += bytes.size
        opts.onProgress?.(sent, file.size)
      }
    }
    await Promise.all(Array.from({ length: Math.min(PARALLEL_PARTS, offer.parts.length) }, worker))
    tags.sort((a, b) => a.partNumber - b.partNumber)
    const done = await this.call(opts, async (signal) =>
      json(
        await send(`${base}${offer.completeUrl}`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: JSON.stringify({ parts: tags }),
          signal,
        }),
      ),
    )
    if (!done.data) throw requestError(done.response.status, done.error, done.response.headers)
    return done.data as Upload
  }

  /** One of this key's unexpired uploads (NotFoundError for another key's, a deleted or an expired one). */
  async getFile(id: string, opts: CallOptions = {}): Promise<Upload> {
    const r = await this.call(opts, (signal) => this.api.GET('/v1/files/{id}', { params: { path: { id } }, signal }))
    if (!r.data) throw requestError(r.response.status, r.error, r.response.headers)
    return r.data as Upload
  }

  /** This key's unexpired uploads, newest first, following `nextCursor` page by page. */
  async *files(opts: CallOptions & { pageSize?: number } = {}): AsyncGenerator<Upload> {
    let cursor: string | undefined
    do {
      const query = { ...(opts.pageSize ? { limit: opts.pageSize } : {}), ...(cursor ? { cursor } : {}) }
      const r = await this.call(opts, (signal) => this.api.GET('/v1/files', { params: { query }, signal }))
      if (!r.data) throw requestError(r.response.status, r.error, r.response.headers)
      yield* r.data.items as Upload[]
      cursor = r.data.nextCursor ?? undefined
    } while (cursor)
  }

  /** Deletes an upload now: jobs can no longer name it. */
  async deleteFile(id: string, opts: CallOptions = {}): Promise<void> {
    const r = await this.call(opts, (signal) => this.api.DELETE('/v1/files/{id}', { params: { path: { id } }, signal }))
    if (r.response.status !== 204) throw requestError(r.response.status, r.error, r.response.headers)
  }

  /**
   * Runs a utility on a local file in one call: uploads it, then runs the utility with the
   * upload as its `url` (and `input`'s other fields). Resolves with the succeeded job.
   */
  async runFile<U extends Utility>(
    utility: U,
    source: FileSource,
    input: Omit<InputOf<U>, 'url'> = {} as Omit<InputOf<U>, 'url'>,
    opts: RequestOptions &
      WaitOptions &
      Pick<UploadOptions, 'name' | 'expiresInSeconds' | 'direct' | 'onProgress'> = {},
  ): Promise<Job> {
    const file = await this.uploadFile(source, {
      name: opts.name,
      expiresInSeconds: opts.expiresInSeconds,
      direct: opts.direct,
      onProgress: opts.onProgress,
      signal: opts.signal,
      requestTimeoutMs: opts.requestTimeoutMs,
      maxRetries: opts.maxRetries,
    })
    return this.run(utility, { ...input, url: file.url } as InputOf<U>, opts)
  }

  private async start(path: string, body: unknown, opts: RequestOptions): Promise<{ status: number; job: Job }> {
    // Every create carries a key, so that a retry (ours or the caller's) is the same job.
    const headers: Record<string, string> = { 'Idempotency-Key': opts.idempotencyKey ?? randomUUID() }
    if (opts.requestId) headers['X-Request-Id'] = opts.requestId
    // The per-utility routes differ only in their input type, which run()/submit() already checked.
    const post = this.api.POST as unknown as (
      p: string,
      init: { body: unknown; headers: Record<string, string>; signal?: AbortSignal },
    ) => Promise<{ data?: unknown; error?: unknown; response: Response }>
    const r = await this.call(opts, (signal) => post(path, { body, headers, signal }))
    const answer = r.data ?? r.error
    // A failed sync run answers with the job itself and the status of its error code.
    if ((answer as { object?: string } | undefined)?.object === 'job')
      return { status: r.response.status, job: answer as Job }
    throw requestError(r.response.status, answer, r.response.headers)
  }

  /**
   * One API call with the client's habits: a timeout per attempt (plus `extraMs`, a long-poll's
   * wait), the caller's signal, and retries with back-off for connection errors and 5xx error
   * envelopes. A failed job's answer (a job body, whatever its status) is an answer, not retried.
   */
  private async call<T extends { response: Response; error?: unknown; data?: unknown }>(
    opts: CallOptions,
    send: (signal: AbortSignal | undefined) => Promise<T>,
    extraMs = 0,
  ): Promise<T> {
    const retries = opts.maxRetries ?? this.options.maxRetries ?? 2
    const timeoutMs = opts.requestTimeoutMs ?? this.options.timeoutMs
    for (let attempt = 0; ; attempt++) {
      const signals = [
        opts.signal,
        timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs + extraMs),
      ].filter((x): x is AbortSignal => x !== undefined)
      const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0]
      let r: T | undefined
      let failure: unknown
      try {
        r = await send(signal)
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason ?? err
        failure = err
      }
      const status = r?.response.status ?? 0
      const retryable = r === undefined || ((status >= 500 || status === 429) && !isJob(r.data ?? r.error))
      if (!retryable) return r!
      if (attempt >= retries) {
        if (r) return r
        const timedOut = (failure as Error)?.name === 'TimeoutError'
        throw new DutilConnectionError(
          `The dutil API at ${this.options.baseUrl} could not be reached${timedOut ? ` within ${timeoutMs} ms` : ''}: ${describeFailure(failure)}`,
          failure,
        )
      }
      const retryAfter = Number(r?.response.headers.get('retry-after'))
      const base = (this.options.retryBaseMs ?? 500) * 2 ** attempt
      const delay =
        Number.isFinite(retryAfter) && retryAfter > 0
          ? retryAfter * 1000
          : Math.min(8000, base) * (0.5 + Math.random() / 2)
      await sleep(delay, opts.signal)
    }
  }
}

/** A request body for a file, the name it goes by, and whether it can be sent again. */
async function fileBody(source: FileSource): Promise<{ body: unknown; name: string; repeatable: boolean }> {
  if (typeof source === 'string') {
    // Streamed from disk by fetch, with its size known (Content-Length).
    const { openAsBlob } = await import('node:fs')
    const { basename } = await import('node:path')
    return { body: await openAsBlob(source), name: basename(source) || 'file', repeatable: true }
  }
  if (source instanceof Uint8Array || source instanceof Blob) return { body: source, name: 'file', repeatable: true }
  if (source instanceof ReadableStream) return { body: source, name: 'file', repeatable: false }
  const it = source[Symbol.asyncIterator]()
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await it.next()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    async cancel() {
      await it.return?.()
    },
  })
  return { body: stream, name: 'file', repeatable: false }
}

function isJob(body: unknown): boolean {
  return (body as { object?: string } | undefined)?.object === 'job'
}

function finished(job: Job): Job {
  if (job.status === 'succeeded') return job
  throw new JobFailedError(job)
}

/** A verified callback: `type` is job.succeeded or job.failed, `data` the job as GET returns it (the API description's `webhooks`). */
export type CallbackEvent = components['schemas']['CallbackEvent']

/**
 * Verifies a callback's Standard Webhooks signature (webhook-id, webhook-timestamp,
 * webhook-signature; the timestamp within 5 minutes) against the key's signing secret
 * (`whsec_…`) and returns the event. Pass the raw body, exactly as received: a string, or its
 * bytes (a Node.js Buffer is a Uint8Array). Throws when the signature does not match. Receivers
 * should de-duplicate on `webhook-id` (the job id).
 */
export function verifyCallback(
  rawBody: string | Uint8Array,
  headers: Record<string, string | string[] | undefined> | Headers,
  secret: string,
): CallbackEvent {
  const plain: Record<string, string> = {}
  if (headers instanceof Headers) headers.forEach((v, k) => (plain[k] = v))
  else
    for (const [k, v] of Object.entries(headers))
      if (v !== undefined) plain[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v
  return new Webhook(secret).verify(
    typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody),
    plain,
  ) as CallbackEvent
}
