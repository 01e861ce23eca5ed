import { EXIT, type RunnerFailure } from '../../contract/runner-protocol.js'
import type { JobErrorCode } from '../../contract/error-codes.js'

/**
 * A classified failure: the job fails at once with this code and public message, without a
 * retry. Anything else a runner throws is a crash, retried by the Job a bounded number of times.
 */
export class RunnerError extends Error {
  constructor(
    readonly code: JobErrorCode,
    message: string,
    readonly upstreamStatus?: number,
    /** Retried by the Job like a crash (only storage_error: our own storage was unreachable). */
    readonly transient = false,
  ) {
    super(message)
    this.name = 'RunnerError'
  }

  get exitCode(): number {
    if (this.transient) return EXIT.storageUnavailable
    if (this.code === 'upstream_rejected') return EXIT.rejected
    if (this.code === 'storage_error') return EXIT.storageError
    return EXIT.upstreamError
  }

  toFailure(): RunnerFailure {
    const f: RunnerFailure = { code: this.code, message: this.message }
    if (this.upstreamStatus !== undefined) f.upstreamStatus = this.upstreamStatus
    return f
  }
}

export const rejected = (message: string, upstreamStatus?: number) =>
  new RunnerError('upstream_rejected', message, upstreamStatus)

/**
 * A URL the address policy refuses (its shape, or where it resolves to), as opposed to one that
 * failed to load: callers tell the two apart by type (html-pdf reports a refused subresource to
 * the job, and only aborts one that failed).
 */
export class UrlRefusedError extends RunnerError {
  constructor(message: string) {
    super('upstream_rejected', message)
    this.name = 'UrlRefusedError'
  }
}
