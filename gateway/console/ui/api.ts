export interface ErrorDetail {
  path: string
  message: string
}

/** A console API error: the error envelope (docs/api.md), kept as data for the page to show. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message)
  }
}

let csrfToken = ''
let onSignedOut: () => void = () => {}

export function setCsrfToken(token: string): void {
  csrfToken = token
}

export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn
}

/** Calls the console API with the session cookie and the CSRF token; a FormData body goes as multipart/form-data. */
export async function call<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  opts: { quiet401?: boolean } = {},
): Promise<T> {
  const form = body instanceof FormData
  const headers: Record<string, string> = { Accept: 'application/json' }
  if (body !== undefined && !form) headers['Content-Type'] = 'application/json'
  if (csrfToken && method !== 'GET') headers['X-CSRF-Token'] = csrfToken
  let res: Response
  try {
    res = await fetch(`/console/api${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
      credentials: 'same-origin',
    })
  } catch {
    throw new ApiFailure(0, 'network', 'The console cannot reach the server. Check your connection and try again.')
  }
  if (res.status === 204) return undefined as T
  const data = (await res.json().catch(() => null)) as {
    error?: { code: string; message: string; details?: ErrorDetail[] }
  } | null
  if (!res.ok) {
    if (res.status === 401 && !opts.quiet401) onSignedOut()
    throw new ApiFailure(
      res.status,
      data?.error?.code ?? 'internal',
      data?.error?.message ?? `The server answered ${res.status}.`,
      data?.error?.details ?? [],
    )
  }
  return data as T
}

export function messageOf(err: unknown): string {
  if (err instanceof ApiFailure) {
    const details = err.details.length ? ` (${err.details.map((d) => `${d.path}: ${d.message}`).join('; ')})` : ''
    return err.message + (err.message.includes(err.details[0]?.message ?? '\u0000') ? '' : details)
  }
  return err instanceof Error ? err.message : String(err)
}
