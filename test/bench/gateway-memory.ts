import { benchPlatform } from './bench-platform.js'

/**
 * `make bench-memory`: the gateway's resident memory while it answers run requests, read from its
 * own /metrics at checkpoints. Rejected requests (400: the body fails validation) and accepted
 * ones (202, node cordoned so that nothing runs) are sent at a fixed concurrency to the local
 * platform on loopback. Memory must stay flat: validators are compiled once at start.
 *
 *   BENCH_MEMORY_REQUESTS=15000 (default)   BENCH_MEMORY_CONCURRENCY=8 (default)
 */
const TOTAL = Number(process.env.BENCH_MEMORY_REQUESTS ?? 15_000)
const CONCURRENCY = Number(process.env.BENCH_MEMORY_CONCURRENCY ?? 8)
const CHECKPOINTS = 5

async function rssMb(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  return Number(/^process_resident_memory_bytes\s+(\S+)/m.exec(text)![1]) / 1048576
}

const { platform, key } = await benchPlatform('bench-memory')
try {
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }
  const utilities = ['split-pdf', 'html-pdf', 'zip-files', 'unzip-files', 'xls-to-xlsx']
  // An invalid body for every utility and both routes: the validators of each are exercised.
  const send = async (i: number) => {
    const slug = utilities[i % utilities.length]
    const path = i % 2 ? `/v1/utilities/${slug}` : `/v1/utilities/${slug}/jobs`
    const res = await fetch(`${platform.gatewayUrl}${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ input: { nope: i } }),
    })
    await res.arrayBuffer()
    if (res.status !== 400) throw new Error(`${path}: expected 400, got ${res.status}`)
  }
  const rows: string[] = [`| requests | gateway RSS MB | p50 ms (last block) |`, `|---|---|---|`]
  rows.push(`| 0 | ${(await rssMb(platform.gatewayUrl)).toFixed(0)} | |`)
  let next = 0
  for (let c = 1; c <= CHECKPOINTS; c++) {
    const until = Math.round((TOTAL * c) / CHECKPOINTS)
    const times: number[] = []
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < until) {
          const i = next++
          const t0 = performance.now()
          await send(i)
          times.push(performance.now() - t0)
        }
      }),
    )
    times.sort((a, b) => a - b)
    const row = `| ${until.toLocaleString('en')} | ${(await rssMb(platform.gatewayUrl)).toFixed(0)} | ${times[Math.floor(times.length / 2)].toFixed(1)} |`
    rows.push(row)
    console.log(row)
  }
  console.log(`\n${rows.join('\n')}`)
} finally {
  await platform.stop()
}
