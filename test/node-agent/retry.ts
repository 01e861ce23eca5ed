// Retry with capped exponential back-off for API calls. Transient failures are retried until
// the signal aborts; other failures a few times, then rethrown.
import type { Logger } from './logger.js'
import { apiStatusCode, errorMessage, isTransient } from './kube-errors.js'

export interface RetryOptions {
  log: Logger
  /** Stops retrying (rejects with the last error) once aborted. */
  signal?: AbortSignal
  baseDelayMs?: number
  maxDelayMs?: number
  /** Attempts for non-transient errors (4xx other than 408/409/429). */
  permanentAttempts?: number
  /** Errors the caller handles itself: rethrown at once. */
  passThrough?: (err: unknown) => boolean
}

export function backoffDelay(attempt: number, baseDelayMs: number, maxDelayMs: number): number {
  return Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, attempt - 1))
}

export class AbortedError extends Error {
  constructor() {
    super('aborted')
    this.name = 'AbortedError'
  }
}

/** Resolves after `ms`, or rejects with AbortedError when the signal aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError())
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(new AbortedError())
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

export async function withRetry<T>(what: string, fn: () => Promise<T>, opts: RetryOptions): Promise<T> {
  const base = opts.baseDelayMs ?? 200
  const max = opts.maxDelayMs ?? 5000
  const permanentAttempts = opts.permanentAttempts ?? 3
  for (let attempt = 1; ; attempt++) {
    if (opts.signal?.aborted) throw new AbortedError()
    try {
      return await fn()
    } catch (err) {
      if (err instanceof AbortedError) throw err
      if (opts.passThrough?.(err)) throw err
      const transient = isTransient(err)
      if (!transient && attempt >= permanentAttempts) throw err
      const delayMs = backoffDelay(attempt, base, max)
      const code = apiStatusCode(err)
      const fields = { what, attempt, delayMs, code, err: errorMessage(err) }
      // Conflicts are routine (someone else wrote the object first); the caller re-reads.
      if (code === 409) opts.log.debug(fields, 'api call conflicted, retrying')
      else opts.log.warn(fields, 'api call failed, retrying')
      await sleep(delayMs, opts.signal)
    }
  }
}
