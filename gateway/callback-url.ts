import { callbackUrlProblem } from '../contract/callback-url.js'
import { invalid } from './api-error.js'

/**
 * Submission-time check of a run request's `callbackUrl` beyond its schema: https only, no
 * credentials, no private/loopback/link-local/multicast/unique-local IP literal. The operator
 * resolves the host and checks again before every attempt. Throws 400 `invalid_request`.
 */
export function assertCallbackUrlAllowed(body: unknown): void {
  const url = (body as { callbackUrl?: unknown } | null)?.callbackUrl
  if (typeof url !== 'string') return
  const problem = callbackUrlProblem(url)
  if (problem)
    throw invalid('The callbackUrl is not an allowed destination.', [{ path: 'callbackUrl', message: problem }])
}
