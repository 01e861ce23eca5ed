import { benchPlatform } from './bench-platform.js'
import { OFFICE_HEADER, officeClients, OVERHEAD_HEADER, routeOverhead } from './gotenberg-rounds.js'

/**
 * `make bench-gotenberg`: dutil's Gotenberg routes on the local platform (job mode, the dev node
 * agent), side by side in one run (test/bench/gotenberg-rounds.ts):
 *
 * 1. what the adapter adds to a small html-pdf beside dutil's own one-call route, outside the job;
 * 2. office-pdf through `/forms/libreoffice/convert`, BENCH_GOTENBERG_CLIENTS clients at once for
 *    BENCH_GOTENBERG_SECONDS. (`make bench-gotenberg` then runs `bench-office` with as many
 *    clients: unoserver's one warm LibreOffice, Gotenberg's way, on the same machine.)
 *
 *   BENCH_GOTENBERG_CALLS=40  BENCH_GOTENBERG_CLIENTS=10  BENCH_GOTENBERG_SECONDS=30
 */
const CALLS = Number(process.env.BENCH_GOTENBERG_CALLS ?? 40)
const CLIENTS = Number(process.env.BENCH_GOTENBERG_CLIENTS ?? 10)
const SECONDS = Number(process.env.BENCH_GOTENBERG_SECONDS ?? 30)

const { platform, key } = await benchPlatform('bench-gotenberg')
try {
  const overhead = await routeOverhead(platform.gatewayUrl, key, CALLS, 'html-pdf, a small page, sync, job mode')
  console.log(overhead)
  const office = await officeClients(platform.gatewayUrl, key, CLIENTS, SECONDS, 'office-pdf, job mode')
  console.log(office)
  console.log(`\n${OVERHEAD_HEADER}\n${overhead}`)
  console.log(`\n${OFFICE_HEADER}\n${office}`)
} finally {
  await platform.stop()
}
