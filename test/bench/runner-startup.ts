import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { catalog } from '../../runners/catalog.js'
import { runnerNodeArgs } from '../../operator/desired-job.js'
import { REPO_ROOT } from '../platform/platform.js'

/**
 * `make bench-startup`: what every job pays before its runner does any work: Node start-up plus
 * loading the runner's program, timed from spawn to exit for a runner started with no job (it
 * loads every module its entry imports, then stops at its first configuration check). Per
 * utility: the bundle the pods run (runners/bundle-runners.ts) against tsc's unbundled output of
 * the same entry, with the pod's node flags, beside a bare `node -e 0`. Median and p90 of RUNS.
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 15)
// html-pdf boots Chromium before anything else (it overlaps loading); here it starts nothing.
const ENV = { PATH: process.env.PATH, DUTIL_CHROMIUM_PATH: '/bin/true' }

function time(args: string[]): { p50: number; p90: number } {
  const ms: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    spawnSync(process.execPath, args, { cwd: REPO_ROOT, env: ENV, stdio: 'ignore' })
    ms.push(performance.now() - t0)
  }
  ms.sort((a, b) => a - b)
  return { p50: Math.round(ms[Math.floor(RUNS / 2)]), p90: Math.round(ms[Math.min(RUNS - 1, Math.floor(RUNS * 0.9))]) }
}

const bare = time(['-e', '0'])
const rows = [
  `| runner | bundle p50 | bundle p90 | unbundled p50 | unbundled p90 | target |`,
  `|---|---|---|---|---|---|`,
]
for (const u of catalog.values()) {
  const flags = runnerNodeArgs(u)
  const bundled = time([...flags, join(REPO_ROOT, u.runner.entry)])
  const unbundled = time([...flags, join(REPO_ROOT, 'dist', 'runners', u.slug, 'main.js')])
  rows.push(
    `| ${u.slug} | ${bundled.p50} ms | ${bundled.p90} ms | ${unbundled.p50} ms | ${unbundled.p90} ms | ≤ 150 ms |`,
  )
}
process.stdout.write(
  `Runner start-up: spawn → exit of a runner given no job, ${RUNS} runs each (bare \`node -e 0\`: p50 ${bare.p50} ms, p90 ${bare.p90} ms)\n\n${rows.join('\n')}\n`,
)
