import { jobTimes, type JobTimes } from './gotenberg-rounds.js'
import { percentile } from './percentile.js'

export const ONE_CALL_HEADER =
  "| one call | from a URL p50 ms | file in the request p50 ms | difference ms | p50 of the pairs' differences ms | from a URL, outside its job p50 ms | file in the request, outside its job p50 ms | inside the job p50 ms (URL / file) | the runner's work, its storage calls, the rest of the job p50 ms (URL; file) |\n|---|---|---|---|---|---|---|---|---|"

/**
 * What taking the file in the request costs a run: the same small split-pdf, sync, `calls` times
 * each way, alternating which goes first: from `url` (a JSON body) and with the PDF's bytes as a
 * `file` part (multipart; the gateway stores it as an upload of the key first). Five warm-up pairs
 * first. Each call's time outside its job is its wall time less the job's totalMs (accepted →
 * succeeded, from the job record): the gateway's part (reading the form, storing the upload).
 * Inside the job, its timings split it: the runner's work (upstreamMs: reading the input and
 * splitting), its storage calls (storageMs: writing the pages) and the rest (admission, hand-over,
 * status). A pair is one call each way, back to back: the p50 of their differences is the
 * difference with the machine's drift taken out. A table row under ONE_CALL_HEADER.
 */
export async function oneCallRound(
  gatewayUrl: string,
  key: string,
  pdf: Buffer,
  url: string,
  calls: number,
  label: string,
  /** Filled with the measured jobs' records, each way, for a caller that reads their logs. */
  jobs: { url: JobTimes[]; file: JobTimes[] } = { url: [], file: [] },
): Promise<string> {
  const auth = { Authorization: `Bearer ${key}` }
  const succeeded = async (res: Response, what: string) => {
    const body = (await res.json()) as { status?: string; id: string }
    if (body.status !== 'succeeded') throw new Error(`${what}: ${res.status} ${JSON.stringify(body)}`)
    return body.id
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
    return succeeded(
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
      const id = await (name === 'url' ? fromUrl() : oneCall())
      times[name].push(performance.now() - t)
      jobs[name].push(await jobTimes(gatewayUrl, key, id))
    }
  }
  const p50 = (xs: number[]) => percentile(xs, 50)
  const inside = { url: jobs.url.map((j) => j.timings), file: jobs.file.map((j) => j.timings) }
  const total = (name: 'url' | 'file') => inside[name].map((t) => t.totalMs)
  const outside = (name: 'url' | 'file') => p50(times[name].map((t, i) => t - inside[name][i].totalMs)).toFixed(0)
  const split = (name: 'url' | 'file') => {
    const work = inside[name].map((t) => t.upstreamMs ?? 0)
    const storage = inside[name].map((t) => t.storageMs ?? 0)
    const rest = inside[name].map((t) => t.totalMs - (t.upstreamMs ?? 0) - (t.storageMs ?? 0))
    return [work, storage, rest].map((xs) => p50(xs).toFixed(0)).join(' / ')
  }
  const pairs = p50(times.file.map((t, i) => t - times.url[i])).toFixed(0)
  return `| ${label}, ${calls} each | ${p50(times.url).toFixed(0)} | ${p50(times.file).toFixed(0)} | ${(p50(times.file) - p50(times.url)).toFixed(0)} | ${pairs} | ${outside('url')} | ${outside('file')} | ${p50(total('url')).toFixed(0)} / ${p50(total('file')).toFixed(0)} | ${split('url')}; ${split('file')} |`
}
