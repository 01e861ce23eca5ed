import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { REPO_ROOT } from '../platform/platform.js'
import { percentile } from './percentile.js'

/**
 * `make bench-office`: LibreOffice's own ways of converting the office-pdf benchmark documents,
 * the anchors dutil's office-pdf rows are read against (docs/benchmarks.md):
 *
 * - cold: `soffice --headless --convert-to pdf`, a fresh profile per document (what a fresh pod
 *   pays), one document at a time;
 * - warm: unoserver (from the Python package index; one LibreOffice listening, as Gotenberg runs
 *   it), converted through its own client `unoconvert` with file paths: one client one document
 *   after another (p50, p90), then BENCH_CLIENTS (default 4) clients at once for BENCH_SECONDS
 *   (default 20) on the 1-page document (documents per second, failures).
 *
 * Everything is loopback: unoserver listens on 127.0.0.1 only.
 */
const exec = promisify(execFile)
const VENV = join(process.env.DUTIL_CACHE ?? join(process.env.HOME ?? '/root', '.cache', 'dutil'), 'venv-unoserver')
const WORK = join(REPO_ROOT, '.bench', 'office')
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20)
const PORT = 20030
const DOCUMENTS: Array<[string, string]> = [
  ['text.docx', '1-page docx'],
  ['report-30.docx', '30-page docx, a table and an image a page'],
  ['sheets.xlsx', '3-sheet xlsx'],
  ['slides-20.pptx', '20-slide pptx'],
]

const say = (m: string) => process.stderr.write(`[bench-office] ${m}\n`)

if (!existsSync(join(VENV, 'bin', 'unoserver'))) {
  say(`installing unoserver into ${VENV}`)
  await exec('/usr/bin/python3', ['-m', 'venv', '--system-site-packages', VENV])
  await exec(join(VENV, 'bin', 'pip'), ['install', '-q', '--disable-pip-version-check', 'unoserver==3.7'])
}
rmSync(WORK, { recursive: true, force: true })
mkdirSync(join(WORK, 'out'), { recursive: true })
for (const [name] of DOCUMENTS)
  writeFileSync(join(WORK, name), readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'documents', name)))

async function timed(cmd: string, args: string[]): Promise<number> {
  const t0 = performance.now()
  await exec(cmd, args, { cwd: WORK })
  return performance.now() - t0
}

const rows: string[] = []
// Cold: a fresh profile per conversion.
let cold = 0
for (const [name, what] of DOCUMENTS) {
  const ms: number[] = []
  for (let i = 0; i < RUNS; i++)
    ms.push(
      await timed('soffice', [
        `-env:UserInstallation=file://${join(WORK, `cold-${cold++}`)}`,
        '--headless',
        '--convert-to',
        'pdf',
        '--outdir',
        join(WORK, 'out'),
        join(WORK, name),
      ]),
    )
  rows.push(
    `| ${what} | soffice --convert-to pdf, cold | ${Math.round(percentile(ms, 50))} | ${Math.round(percentile(ms, 90))} |`,
  )
  say(rows.at(-1)!)
}

// Warm: one unoserver.
const server = spawn(
  join(VENV, 'bin', 'unoserver'),
  [
    '--interface',
    '127.0.0.1',
    '--port',
    String(PORT),
    '--uno-port',
    String(PORT + 1),
    '--user-installation',
    join(WORK, 'warm-profile'),
  ],
  { stdio: 'ignore', detached: true },
)
try {
  const convert = (name: string, out: string) =>
    timed(join(VENV, 'bin', 'unoconvert'), [
      '--host',
      '127.0.0.1',
      '--port',
      String(PORT),
      '--convert-to',
      'pdf',
      join(WORK, name),
      join(WORK, 'out', out),
    ])
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      await convert('text.docx', 'ready.pdf')
      break
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise((r) => setTimeout(r, 500))
    }
  }
  for (const [name, what] of DOCUMENTS) {
    const ms: number[] = []
    try {
      for (let i = 0; i < RUNS; i++) ms.push(await convert(name, `warm-${i}-${name}.pdf`))
    } catch (err) {
      // A document the anchor cannot convert is a row that says so, not the end of the run.
      rows.push(
        `| ${what} | unoserver 3.7 + unoconvert, warm | failed: ${String((err as Error).message)
          .split('\n')
          .filter((l) => l.includes('Fault'))
          .join(' ')
          .slice(0, 160)} | |`,
      )
      say(rows.at(-1)!)
      continue
    }
    rows.push(
      `| ${what} | unoserver 3.7 + unoconvert, warm, one client | ${Math.round(percentile(ms, 50))} | ${Math.round(percentile(ms, 90))} |`,
    )
    say(rows.at(-1)!)
  }
  let done = 0
  let failed = 0
  const end = performance.now() + SECONDS * 1000
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; performance.now() < end; i++)
        await convert('text.docx', `burst-${c}-${i}.pdf`).then(
          () => done++,
          () => failed++,
        )
    }),
  )
  const perS = done / ((performance.now() - t0) / 1000)
  rows.push(
    `| 1-page docx | unoserver 3.7, ${CLIENTS} clients at once | ${perS.toFixed(2)} documents/s | ${failed} failed |`,
  )
  say(rows.at(-1)!)
} finally {
  try {
    process.kill(-server.pid!, 'SIGKILL')
  } catch {
    // gone
  }
  server.unref()
}
process.stdout.write(`| document | anchor | p50 ms | p90 ms |\n|---|---|---|---|\n${rows.join('\n')}\n`)
