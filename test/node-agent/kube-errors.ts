// Classifies errors thrown by @kubernetes/client-node 1.4.0 (ApiException with `.code`,
// node-fetch FetchError or plain network errors without one).
import { ApiException } from '@kubernetes/client-node'

export function apiStatusCode(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code
  if (typeof err === 'object' && err !== null) {
    const { code, statusCode } = err as { code?: unknown; statusCode?: unknown }
    if (typeof code === 'number') return code
    if (typeof statusCode === 'number') return statusCode
  }
  return undefined
}

export const isNotFound = (err: unknown): boolean => apiStatusCode(err) === 404
export const isConflict = (err: unknown): boolean => apiStatusCode(err) === 409

/** Worth retrying unchanged: network failures, throttling, timeouts, server errors, conflicts. */
export function isTransient(err: unknown): boolean {
  const code = apiStatusCode(err)
  if (code === undefined) return true
  return code === 409 || code === 408 || code === 429 || code >= 500
}

/** The API server's message (Status.message) when there is one, else the error's message. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = err.body
    if (typeof body === 'string') {
      try {
        const parsed = JSON.parse(body) as { message?: unknown }
        if (typeof parsed.message === 'string') return parsed.message
      } catch {
        // not JSON: fall through
      }
      if (body.length > 0) return body.slice(0, 500)
    } else if (
      typeof body === 'object' &&
      body !== null &&
      typeof (body as { message?: unknown }).message === 'string'
    ) {
      return (body as { message: string }).message
    }
    return `HTTP ${err.code}`
  }
  return err instanceof Error ? err.message : String(err)
}
