import { describe, expect, it } from 'vitest'
import {
  ConflictError,
  DutilRequestError,
  InvalidRequestError,
  JobFailedError,
  RateLimitedError,
  requestError,
} from './errors.js'

describe('errors', () => {
  it('types the error envelope by its code, with Retry-After and the request id', () => {
    const limited = requestError(
      429,
      { error: { code: 'rate_limited', message: 'Slow down.' } },
      new Headers({ 'retry-after': '17', 'x-request-id': 'req-1' }),
    )
    expect(limited).toBeInstanceOf(RateLimitedError)
    expect(limited).toMatchObject({
      code: 'rate_limited',
      status: 429,
      retryAfter: 17,
      requestId: 'req-1',
      message: 'Slow down.',
    })
    const invalid = requestError(
      400,
      { error: { code: 'invalid_request', message: 'Bad.', details: [{ path: 'input.url', message: 'is required' }] } },
      new Headers(),
    )
    expect(invalid).toBeInstanceOf(InvalidRequestError)
    expect(invalid.details).toEqual([{ path: 'input.url', message: 'is required' }])
    expect(invalid.retryAfter).toBeNull()
    expect(requestError(409, { error: { code: 'conflict', message: 'x' } }, new Headers())).toBeInstanceOf(
      ConflictError,
    )
  })

  it('still throws something useful for an answer that is not the envelope', () => {
    const odd = requestError(502, '<html>bad gateway</html>', new Headers())
    expect(odd).toBeInstanceOf(DutilRequestError)
    expect(odd).toMatchObject({ code: 'http_502', status: 502, message: 'HTTP 502' })
  })

  it('carries a failed job and its error code', () => {
    const job = {
      id: 'job_1',
      utility: 'split-pdf',
      status: 'failed',
      error: { code: 'upstream_rejected', message: 'The file is not a valid PDF.' },
    } as never
    const err = new JobFailedError(job)
    expect(err).toMatchObject({ code: 'upstream_rejected', job, name: 'JobFailedError' })
    expect(err.message).toContain('The file is not a valid PDF.')
  })
})
