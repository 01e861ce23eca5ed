import { inject } from 'vitest'

export interface ApiResponse<T = any> {
  status: number
  headers: Headers
  body: T
}

/** One HTTP call to the gateway under test, as a client would make it. */
export async function api<T = any>(
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; baseUrl?: string } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  if (opts.key) headers.Authorization = `Bearer ${opts.key}`
  let body: string | undefined = opts.rawBody
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers['Content-Type'] ??= 'application/json'
  }
  const res = await fetch((opts.baseUrl ?? inject('gatewayUrl')) + path, { method, headers, body })
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    // Not JSON: keep the text for the assertion message.
  }
  return { status: res.status, headers: res.headers, body: parsed as T }
}

export async function download(url: string): Promise<{ status: number; bytes: Buffer; contentType: string | null }> {
  const res = await fetch(url)
  return {
    status: res.status,
    bytes: Buffer.from(await res.arrayBuffer()),
    contentType: res.headers.get('content-type'),
  }
}
