/**
 * `-v/--verbose`: a fetch that prints each request and its answer on stderr (method, URL,
 * status, time, request id), never a header's value beyond the request id, so an API key never
 * lands in a terminal's scrollback or a CI log.
 */
export function verboseFetch(write: (line: string) => void, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init)
    const started = performance.now()
    const url = new URL(request.url)
    const shown = `${url.origin}${url.pathname}${url.search}`
    write(`> ${request.method} ${shown}\n`)
    try {
      const res = await inner(request)
      const id = res.headers.get('x-request-id')
      write(
        `< ${res.status} ${res.statusText} (${Math.round(performance.now() - started)} ms)${id ? ` x-request-id: ${id}` : ''}\n`,
      )
      return res
    } catch (err) {
      write(`< no answer (${Math.round(performance.now() - started)} ms): ${(err as Error).message}\n`)
      throw err
    }
  }
}
