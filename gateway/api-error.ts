import { ERROR_STATUS, type ErrorCode } from '../contract/error-codes.js'

export interface ErrorDetail {
  path: string
  message: string
}

/**
 * The gateway's one error taxonomy: a public code and message (sent), optional details and
 * headers. Anything thrown that is not an ApiError is an unexpected failure: logged with the
 * request id and answered as 500 `internal` without its cause.
 */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers: Record<string, string> = {},
    /** What went wrong underneath (logged with the request id, never sent). */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'ApiError'
  }

  get status(): number {
    return ERROR_STATUS[this.code]
  }
}

export const invalid = (message: string, details?: ErrorDetail[]) => new ApiError('invalid_request', message, details)
export const notFound = (message = 'Not found.') => new ApiError('not_found', message)
