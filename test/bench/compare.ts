import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import { ApiKeyAdmin } from '../../contract/api-key-admin.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { runRunner } from '../support/runner-harness.js'
import { benchPage, benchWorkbook, textFile } from './bench-inputs.js'
import { REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'

/**
 * `make bench`: each runner beside the best native tool on the same input, in one run.
 *
 * The runner column is the runner program exactly as its pod runs it (same entry, heap cap and
 * node flags; input URL on a loopback file server, outputs to the platform's MinIO), started as
 * a child process so that its wall time and peak resident memory can be measured with wait4
 * (GNU time) the same way as the native tool's. It therefore includes what the native tool does
 * not do: Node start-up, downloading the input and uploading every output. The last column is
 * the same input once through the whole platform (API → operator → Job → pod), as `totalMs`.
 *
 * BENCH_RUNS (default 3) runs per side; the median time and the largest peak RSS are shown.
 * BENCH_ONLY=split-pdf,html-pdf limits the run to those utilities.
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null
const wanted = (slug: string) => !ONLY || ONLY.has(slug)
const WORK = join(REPO_ROOT, '.bench', 'work')

interface Measured {
  ms: number
  rssMb: number
  /** The runner's own split of its time (result manifest): inside the utility, and storage. */
  upstreamMs?: number
  storageMs?: number
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** Runs a native command under GNU time: wall ms and peak RSS (MB). */
function timed(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Measured> {
  const timeFile = join(WORK, `time-${process.pid}`)
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn('/usr/bin/time', ['-f', '%M', '-o', timeFile, cmd, ...args], { cwd: opts.cwd ?? WORK, env: opts.env ?? process.env, stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    child.on('close', (code) => {
      const ms = performance.now() - t0
      if (code !== 0) return reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(-500)}`))
      resolve({ ms, rssMb: Number(readFileSync(timeFile, 'utf8').trim().split('\n').pop()) / 1024 })
    })
  })
}

async function repeat(n: number, run: () => Promise<Measured>, before?: () => void): Promise<Measured> {
  const all: Measured[] = []
  for (let i = 0; i < n; i++) {
    before?.()
    all.push(await run())
  }
  const mid = [...all].sort((a, b) => a.ms - b.ms)[Math.floor(all.length / 2)]
  return { ...mid, rssMb: Math.max(...all.map((m) => m.rssMb)) }
}

interface Row {
  utility: string
  input: string
  tool: string
  native: Measured
  runner: Measured
  platformMs: number | null
  /** Time target: runner/native at most this (or, with `faster`, native/runner at least this). */
  target: { ratio: number; faster?: boolean; rssMb?: number }
}

rmSync(join(REPO_ROOT, '.bench'), { recursive: true, force: true })
mkdirSync(WORK, { recursive: true })
const say = (m: string) => process.stderr.write(`[bench] ${m}\n`)
const platform = await startPlatform({ dir: join(REPO_ROOT, '.bench'), ports: TEST_PORTS, fresh: false, allowLoopbackUrls: true, testHooks: false, progress: say })
const files = await new FileServer().start()
const rows: Row[] = []
try {
  const kc = new KubeConfig()
  kc.loadFromFile(platform.kubeconfigPath)
  const { key } = await new ApiKeyAdmin(kc, 'dutil').create({ name: 'bench', utilities: [] })
  const viaPlatform = async (slug: string, input: unknown): Promise<number | null> => {
    const res = await fetch(`${platform.gatewayUrl}/v1/utilities/${slug}`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ input }) })
    const job = (await res.json()) as { status: string; timings: { totalMs: number }; error: unknown }
    if (job.status !== 'succeeded') say(`${slug} through the platform: ${job.status} ${JSON.stringify(job.error)}`)
    return job.status === 'succeeded' ? job.timings.totalMs : null
  }
  const runner = (slug: string, input: unknown) => async (): Promise<Measured> => {
    const r = await runRunner(slug, input, platform.storage)
    if (r.exitCode !== 0) throw new Error(`${slug} runner exited ${r.exitCode}: ${JSON.stringify(r.failure)}\n${r.log.slice(-1500)}`)
    return { ms: r.wallMs, rssMb: r.peakRssKb / 1024, upstreamMs: r.result?.upstreamMs, storageMs: r.result?.storageMs }
  }

  // split-pdf: 500 pages.
  if (wanted('split-pdf')) {
    say('split-pdf: 500 pages vs qpdf --split-pages')
    const pdf = await makePdf(500)
    writeFileSync(join(WORK, 'in.pdf'), pdf)
    const url = files.add('bench.pdf', pdf)
    const out = join(WORK, 'split')
    const native = await repeat(RUNS, () => timed('qpdf', ['--split-pages', 'in.pdf', join(out, 'page-%d.pdf')]), () => {
      rmSync(out, { recursive: true, force: true })
      mkdirSync(out)
    })
    rows.push({ utility: 'split-pdf', input: `500 pages, ${(pdf.length / 1024).toFixed(0)} KB`, tool: 'qpdf --split-pages', native, runner: await repeat(RUNS, runner('split-pdf', { url })), platformMs: await viaPlatform('split-pdf', { url }), target: { ratio: 1.5 } })
  }

  // zip-files: 500 files.
  const zipDir = join(WORK, 'zipin')
  if (wanted('zip-files') || wanted('unzip-files')) {
    say('zip-files: 500 files vs zip')
    mkdirSync(zipDir, { recursive: true })
    const list: Array<{ url: string; fileName: string }> = []
    let total = 0
    for (let i = 0; i < 500; i++) {
      const body = textFile(i, 100_000 + ((i * 7919) % 200_000))
      total += body.length
      writeFileSync(join(zipDir, `file-${String(i).padStart(3, '0')}.log`), body)
      list.push({ url: files.add(`z${i}.log`, body, 'text/plain'), fileName: `file-${String(i).padStart(3, '0')}.log` })
    }
    const native = await repeat(RUNS, () => timed('zip', ['-q', '-r', '-6', join(WORK, 'native.zip'), '.'], { cwd: zipDir }), () => rmSync(join(WORK, 'native.zip'), { force: true }))
    if (wanted('zip-files')) rows.push({ utility: 'zip-files', input: `500 files, ${(total / 1024 ** 2).toFixed(0)} MB`, tool: 'zip -r -6', native, runner: await repeat(RUNS, runner('zip-files', { files: list })), platformMs: await viaPlatform('zip-files', { files: list }), target: { ratio: 1.2, rssMb: 64 } })

    // The same runner on 8× the bytes: its memory must not grow with the total.
    if (wanted('zip-files')) {
    say('zip-files: 4 files of 200 MB (memory bound)')
    const big: Array<{ url: string; fileName: string }> = []
    const bigDir = join(WORK, 'zipbig')
    mkdirSync(bigDir, { recursive: true })
    for (let i = 0; i < 4; i++) {
      const body = Buffer.concat(Array.from({ length: 20 }, (_, j) => textFile(i * 100 + j, 10 * 1024 ** 2)))
      writeFileSync(join(bigDir, `big-${i}.log`), body)
      big.push({ url: files.add(`big${i}.log`, body, 'text/plain'), fileName: `big-${i}.log` })
    }
    const nativeBig = await repeat(1, () => timed('zip', ['-q', '-r', '-6', join(WORK, 'big.zip'), '.'], { cwd: bigDir }), () => rmSync(join(WORK, 'big.zip'), { force: true }))
    rows.push({ utility: 'zip-files', input: '4 files, 800 MB', tool: 'zip -r -6', native: nativeBig, runner: await repeat(1, runner('zip-files', { files: big })), platformMs: null, target: { ratio: 1.2, rssMb: 64 } })
    rmSync(bigDir, { recursive: true, force: true })
    }
  }

  // unzip-files: the 500-file archive made by zip.
  if (wanted('unzip-files')) {
    say('unzip-files: 500 entries vs unzip')
    const archive = readFileSync(join(WORK, 'native.zip'))
    const url = files.add('bench.zip', archive, 'application/zip')
    const out = join(WORK, 'unzipped')
    const native = await repeat(RUNS, () => timed('unzip', ['-q', '-o', join(WORK, 'native.zip'), '-d', out]), () => rmSync(out, { recursive: true, force: true }))
    rows.push({ utility: 'unzip-files', input: `500 entries, ${(archive.length / 1024 ** 2).toFixed(0)} MB zip`, tool: 'unzip', native, runner: await repeat(RUNS, runner('unzip-files', { url })), platformMs: await viaPlatform('unzip-files', { url }), target: { ratio: 1.5 } })
  }

  // html-pdf: a page with a stylesheet and a 400-row table.
  if (wanted('html-pdf')) {
    say('html-pdf vs chromium --headless --print-to-pdf')
    files.add('bench.css', Buffer.from('body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;width:100%}td,th{border:1px solid #999;padding:2px 6px}h1{color:#235}'), 'text/css')
    const url = files.add('report.html', benchPage(), 'text/html')
    const profile = join(WORK, 'chromium-profile')
    const native = await repeat(RUNS, () =>
      timed('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', `--user-data-dir=${profile}`, '--no-pdf-header-footer', `--print-to-pdf=${join(WORK, 'cli.pdf')}`, url]),
    )
    rows.push({ utility: 'html-pdf', input: 'report, 400-row table + CSS', tool: 'chromium --print-to-pdf', native, runner: await repeat(RUNS, runner('html-pdf', { url })), platformMs: await viaPlatform('html-pdf', { url }), target: { ratio: 1.1 } })
  }

  // xls-to-xlsx: 4 sheets × 5000 rows × 8 columns.
  if (wanted('xls-to-xlsx')) {
    say('xls-to-xlsx vs LibreOffice --convert-to xlsx')
    const xls = benchWorkbook()
    writeFileSync(join(WORK, 'bench.xls'), xls)
    const url = files.add('bench.xls', xls, 'application/vnd.ms-excel')
    const loProfile = `file://${join(WORK, 'lo-profile')}`
    const lo = () => timed('soffice', [`-env:UserInstallation=${loProfile}`, '--headless', '--convert-to', 'xlsx', '--outdir', join(WORK, 'lo-out'), join(WORK, 'bench.xls')])
    // A fresh pod starts LibreOffice with an empty profile every time: that is the cold row.
    const cold = await lo()
    const native = await repeat(RUNS, lo)
    const ours = await repeat(RUNS, runner('xls-to-xlsx', { url }))
    const input = `4 sheets × 5,000 rows, ${(xls.length / 1024 ** 2).toFixed(1)} MB`
    rows.push({ utility: 'xls-to-xlsx', input, tool: 'soffice, warm profile', native, runner: ours, platformMs: await viaPlatform('xls-to-xlsx', { url }), target: { ratio: 3, faster: true } })
    rows.push({ utility: 'xls-to-xlsx', input, tool: 'soffice, cold (fresh pod)', native: cold, runner: ours, platformMs: null, target: { ratio: 3, faster: true } })
  }
} finally {
  await files.stop()
  await platform.stop()
  for (const f of readdirSync(WORK)) if (f.startsWith('time-')) rmSync(join(WORK, f), { force: true })
}

const fmtS = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const fmtMb = (mb: number) => `${mb.toFixed(0)} MB`
const header = ['utility', 'input', 'native tool', 'native', 'runner', 'runner work / storage', 'time ratio', 'target', 'native RSS', 'runner RSS', 'RSS ratio', 'platform totalMs', 'met']
const table = rows.map((r) => {
  const ratio = r.runner.ms / r.native.ms
  const timeOk = r.target.faster ? r.native.ms / r.runner.ms >= r.target.ratio : ratio <= r.target.ratio
  const rssOk = r.target.rssMb === undefined || r.runner.rssMb <= r.target.rssMb
  const target = r.target.faster ? `≥ ${r.target.ratio}× faster` : `≤ ${r.target.ratio}×` + (r.target.rssMb ? `, ≤ ${r.target.rssMb} MB` : '')
  const shown = r.target.faster ? `${(r.native.ms / r.runner.ms).toFixed(2)}× faster` : `${ratio.toFixed(2)}×`
  const split = r.runner.upstreamMs === undefined ? '—' : `${fmtS(r.runner.upstreamMs)} / ${fmtS(r.runner.storageMs ?? 0)}`
  return [r.utility, r.input, r.tool, fmtS(r.native.ms), fmtS(r.runner.ms), split, shown, target, fmtMb(r.native.rssMb), fmtMb(r.runner.rssMb), `${(r.runner.rssMb / r.native.rssMb).toFixed(1)}×`, r.platformMs === null ? '—' : String(r.platformMs), timeOk && rssOk ? 'yes' : `no${timeOk ? '' : ' (time)'}${rssOk ? '' : ' (memory)'}`]
})
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)))
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
console.log(`\nRunners vs native tools (${RUNS} runs each, median time, largest peak RSS; runner = its program as the pod runs it, incl. start-up, download and upload)\n`)
console.log(line(header))
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`)
for (const row of table) console.log(line(row))
