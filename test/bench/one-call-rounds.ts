import { percentile } from './percentile.js'

export const ONE_CALL_HEADER =
  '| one call | from a URL p50 ms | file in the request p50 ms | difference ms |\n|---|---|---|---|'

/**
 * What taking the file in the request costs a run: the same small split-pdf, sync, `calls` times
 * each way, alternating which goes first: from `url` (a JSON body) and with the PDF's bytes as a
 * `file` part (multipart; the gateway stores it as an upload of the key first). Five warm-up pairs
 * first. A table row under ONE_CALL_HEADER.
 */
export async function oneCallRound(
  gatewayUrl: string,
  key: string,
  pdf: Buffer,
  url: string,
  calls: number,
  label: string,
): Promise<string> {
  const auth = { Authorization: `Bearer ${key}` }
  const succeeded = async (res: Response, what: string) => {
    const body = (await res.json()) as { status?: string }
    if (body.status !== 'succeeded') throw new Error(`${what}: ${res.status} ${JSON.stringify(body)}`)
  }
  const fromUrl = async () =>
    succeeded(
      await fetch(`${gatewayUrl}/v1/utilities/split-pdf`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ input: { url } }),
      }),
      'URL run',
    )
  const oneCall = async () => {
    const form = new FormData()
    form.append('file', new Blob([pdf]), 'small.pdf')
    await succeeded(
      await fetch(`${gatewayUrl}/v1/utilities/split-pdf`, { method: 'POST', headers: auth, body: form }),
      'one-call run',
    )
  }
  const times = { url: [] as number[], file: [] as number[] }
  for (let i = 0; i < 5; i++) {
    await fromUrl()
    await oneCall()
  }
  for (let i = 0; i < calls; i++) {
    const order = i % 2 ? (['url', 'file'] as const) : (['file', 'url'] as const)
    for (const name of order) {
      const t = performance.now()
      await (name === 'url' ? fromUrl() : oneCall())
      times[name].push(performance.now() - t)
    }
  }
  const p50 = (xs: number[]) => percentile(xs, 50)
  return `| ${label}, ${calls} each | ${p50(times.url).toFixed(0)} | ${p50(times.file).toFixed(0)} | ${(p50(times.file) - p50(times.url)).toFixed(0)} |`
}
