import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { FileServer } from '../support/file-server.js'
import { makeHeavyPdf, makePdf } from '../support/pdfs.js'
import { runRunner } from '../support/runner-harness.js'
import { benchPage, benchWorkbook, textFile } from './bench-inputs.js'
import { stampPage, stampSourceOf } from '../../runners/edit-pdf/stamp.js'
import {
  GHOSTSCRIPT,
  ghostscriptArgs,
  pdfaDefinition,
  type RewriteOptions,
} from '../../runners/edit-pdf/ghostscript.js'
import { noisePng } from '../support/office-documents.js'
import { BIN_DIR, REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'

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
/** BENCH_LARGE=0 skips the large-input rows (150 MB PDF, 1 GB archive, 500 × 1 MB and 4 × 200 MB zips). */
const LARGE = process.env.BENCH_LARGE !== '0'
const fmtS = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const fmtMb = (mb: number) => `${mb.toFixed(0)} MB`

interface Measured {
  ms: number
  rssMb: number
  /** The runner's own split of its time (result manifest): inside the utility, and storage. */
  upstreamMs?: number
  storageMs?: number
}

/** Runs a native command under GNU time: wall ms and peak RSS (MB). */
function timed(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Measured> {
  const timeFile = join(WORK, `time-${process.pid}`)
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn('/usr/bin/time', ['-f', '%M', '-o', timeFile, cmd, ...args], {
      cwd: opts.cwd ?? WORK,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
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

/** Which measure a time target is set against. */
type Anchor = 'native' | 'anchor'

interface Row {
  utility: string
  input: string
  tool: string
  /** The native tool alone, reading and writing local files. */
  native: Measured
  /** The native tool, then MinIO's own client storing its outputs in the same MinIO (mc cp). */
  anchor: Measured | null
  runner: Measured
  platformMs: number | null
  /** Time target: runner/against at most `ratio` (or, with `faster`, against/runner at least `ratio`). */
  target: { against: Anchor; ratio: number; faster?: boolean; rssMb?: number; rssOfNative?: boolean }
}

rmSync(join(REPO_ROOT, '.bench'), { recursive: true, force: true })
mkdirSync(WORK, { recursive: true })
const say = (m: string) => process.stderr.write(`[bench] ${m}\n`)
const platform = await startPlatform({
  dir: join(REPO_ROOT, '.bench'),
  ports: TEST_PORTS,
  fresh: false,
  allowLoopbackUrls: true,
  testHooks: false,
  progress: say,
})
const files = await new FileServer().start()
const rows: Row[] = []
// MinIO's client, at its defaults, pointed at the platform's MinIO (the bucket the runners write to).
const st = platform.storage
const mcEnv = {
  ...process.env,
  MC_CONFIG_DIR: join(WORK, 'mc'),
  MC_HOST_bench: `${new URL(st.endpoint).protocol}//${encodeURIComponent(st.accessKey)}:${encodeURIComponent(st.secretKey)}@${new URL(st.endpoint).host}`,
}
let uploads = 0
/** The native tool, then `mc cp` of what it wrote (a file or a folder) into the bucket: the anchor. */
const thenUpload = (native: () => Promise<Measured>, output: string) => async (): Promise<Measured> => {
  const a = await native()
  const b = await timed(
    join(BIN_DIR, 'mc'),
    ['cp', '--quiet', '--recursive', output, `bench/${st.bucket}/bench-anchor/${uploads++}/`],
    { env: mcEnv },
  )
  return { ms: a.ms + b.ms, rssMb: Math.max(a.rssMb, b.rssMb), storageMs: b.ms }
}
try {
  const kc = new KubeConfig()
  kc.loadFromFile(platform.kubeconfigPath)
  const { key } = await new ApiKeyAdmin(kc, 'dutil').create({ name: 'bench', utilities: [] })
  const viaPlatform = async (slug: string, input: unknown): Promise<number | null> => {
    const res = await fetch(`${platform.gatewayUrl}/v1/utilities/${slug}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ input }),
    })
    const job = (await res.json()) as { status: string; timings: { totalMs: number }; error: unknown }
    if (job.status !== 'succeeded') say(`${slug} through the platform: ${job.status} ${JSON.stringify(job.error)}`)
    return job.status === 'succeeded' ? job.timings.totalMs : null
  }
  const runner = (slug: string, input: unknown) => async (): Promise<Measured> => {
    const r = await runRunner(slug, input, platform.storage)
    if (r.exitCode !== 0)
      throw new Error(`${slug} runner exited ${r.exitCode}: ${JSON.stringify(r.failure)}\n${r.log.slice(-1500)}`)
    return { ms: r.wallMs, rssMb: r.peakRssKb / 1024, upstreamMs: r.result?.upstreamMs, storageMs: r.result?.storageMs }
  }
  /** One row: native alone, native + upload, the runner (and once through the platform). */
  const measure = async (
    row: Omit<Row, 'native' | 'anchor' | 'runner' | 'platformMs'>,
    o: {
      native: () => Promise<Measured>
      output?: string
      before?: () => void
      runner: () => Promise<Measured>
      runs?: number
      platformInput?: unknown
    },
  ) => {
    const runs = o.runs ?? RUNS
    const native = await repeat(runs, o.native, o.before)
    const anchor = o.output ? await repeat(runs, thenUpload(o.native, o.output), o.before) : null
    const ours = await repeat(runs, o.runner)
    const platformMs = o.platformInput === undefined ? null : await viaPlatform(row.utility, o.platformInput)
    rows.push({ ...row, native, anchor, runner: ours, platformMs })
    say(
      `${row.utility} (${row.input}): native ${fmtS(native.ms)}${anchor ? `, + mc ${fmtS(anchor.ms)}` : ''}, runner ${fmtS(ours.ms)} ${fmtMb(ours.rssMb)}`,
    )
  }
  const fresh = (dir: string) => () => {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
  }

  // split-pdf: 500 pages.
  if (wanted('split-pdf')) {
    say('split-pdf: 500 pages vs qpdf --split-pages')
    const pdf = await makePdf(500)
    writeFileSync(join(WORK, 'in.pdf'), pdf)
    const url = files.add('bench.pdf', pdf)
    const out = join(WORK, 'split')
    await measure(
      {
        utility: 'split-pdf',
        input: `500 pages, ${(pdf.length / 1024).toFixed(0)} KB`,
        tool: 'qpdf --split-pages',
        target: { against: 'anchor', ratio: 1.3 },
      },
      {
        native: () => timed('qpdf', ['--split-pages', 'in.pdf', join(out, 'page-%d.pdf')]),
        output: `${out}/`,
        before: fresh(out),
        runner: runner('split-pdf', { url }),
        platformInput: { url },
      },
    )
    if (LARGE) {
      say('split-pdf: 150 MB, 500 pages')
      const big = await makeHeavyPdf(500, 300_000)
      writeFileSync(join(WORK, 'big.pdf'), big)
      const bigUrl = files.add('big.pdf', big)
      rmSync(join(WORK, 'in.pdf'))
      await measure(
        {
          utility: 'split-pdf',
          input: `500 pages, ${(big.length / 1024 ** 2).toFixed(0)} MB`,
          tool: 'qpdf --split-pages',
          target: { against: 'anchor', ratio: 1.3 },
        },
        {
          native: () => timed('qpdf', ['--split-pages', 'big.pdf', join(out, 'page-%d.pdf')]),
          output: `${out}/`,
          before: fresh(out),
          runner: runner('split-pdf', { url: bigUrl }),
          runs: 1,
        },
      )
      rmSync(join(WORK, 'big.pdf'))
    }
    rmSync(out, { recursive: true, force: true })
  }

  // merge-pdf: 10 × 50 pages.
  if (wanted('merge-pdf')) {
    say('merge-pdf: 10 × 50 pages vs qpdf --empty --pages')
    const names: string[] = []
    const urls: Array<{ url: string }> = []
    let total = 0
    for (let i = 0; i < 10; i++) {
      const pdf = await makePdf(50)
      total += pdf.length
      names.push(`merge-${i}.pdf`)
      writeFileSync(join(WORK, names[i]), pdf)
      urls.push({ url: files.add(names[i], pdf) })
    }
    const out = join(WORK, 'merged')
    await measure(
      {
        utility: 'merge-pdf',
        input: `10 × 50 pages, ${(total / 1024).toFixed(0)} KB`,
        tool: 'qpdf --empty --pages',
        target: { against: 'anchor', ratio: 1.3 },
      },
      {
        native: () => timed('qpdf', ['--empty', '--pages', ...names, '--', join(out, 'merged.pdf')]),
        output: `${out}/`,
        before: fresh(out),
        runner: runner('merge-pdf', { files: urls }),
        platformInput: { files: urls },
      },
    )
    // The same with a scan-like image on every page (about 5 MB an input): transfers count. With
    // BENCH_LARGE, ~24 MB an input, a merged document near the 300 MB cap for all inputs: the
    // runner's memory should follow one input, not the output.
    const scanned = [{ imageBytes: 100_000, prefix: 'heavy', runs: undefined as number | undefined }]
    if (LARGE) scanned.push({ imageBytes: 500_000, prefix: 'large', runs: 1 })
    for (const { imageBytes, prefix, runs } of scanned) {
      const scannedUrls: Array<{ url: string }> = []
      let scannedTotal = 0
      for (let i = 0; i < 10; i++) {
        const pdf = await makeHeavyPdf(50, imageBytes)
        scannedTotal += pdf.length
        writeFileSync(join(WORK, names[i]), pdf)
        scannedUrls.push({ url: files.add(`${prefix}-${names[i]}`, pdf) })
      }
      await measure(
        {
          utility: 'merge-pdf',
          input: `10 × 50 scanned pages, ${(scannedTotal / 1024 ** 2).toFixed(0)} MB`,
          tool: 'qpdf --empty --pages',
          target: { against: 'anchor', ratio: 1.3 },
        },
        {
          native: () => timed('qpdf', ['--empty', '--pages', ...names, '--', join(out, 'merged.pdf')]),
          output: `${out}/`,
          before: fresh(out),
          runner: runner('merge-pdf', { files: scannedUrls }),
          platformInput: { files: scannedUrls },
          runs,
        },
      )
    }
    for (const n of names) rmSync(join(WORK, n))
    rmSync(out, { recursive: true, force: true })
  }

  // edit-pdf: the edits against qpdf doing the same on the same file (the runner runs qpdf too,
  // after describing the document with it; the stamp's page is pdf-lib's in both).
  if (wanted('edit-pdf')) {
    say(
      'edit-pdf: 500 pages turned and stamped, stamped with a picture, with two files embedded; 50 scanned pages compressed and linearized; 500 pages protected; vs qpdf',
    )
    const plain = await makePdf(500)
    writeFileSync(join(WORK, 'edit.pdf'), plain)
    writeFileSync(join(WORK, 'stamp.pdf'), await stampPage({ text: 'PAID', angle: 45 }))
    const scans = await makeHeavyPdf(50, 100_000)
    writeFileSync(join(WORK, 'scans.pdf'), scans)
    // A picture stamp (a 256 px PNG logo) and two files to embed (4 MB and 1 MB of text).
    const logo = noisePng(256)
    const logoSource = stampSourceOf(logo, 40_000_000)
    if (typeof logoSource === 'string' || logoSource.kind === 'pdf') throw new Error('the bench logo is no PNG')
    writeFileSync(join(WORK, 'stamp-picture.pdf'), await stampPage({ image: 'logo.png', angle: 30 }, logoSource))
    const logoUrl = files.add('bench-logo.png', logo)
    const ledger = Buffer.from('date,item,amount\n' + '2026-11-29,widget,12.50\n'.repeat(170_000))
    const notes = Buffer.from('<notes>' + '<n>A line of notes about the document.</n>'.repeat(24_000) + '</notes>')
    writeFileSync(join(WORK, 'ledger.csv'), ledger)
    writeFileSync(join(WORK, 'notes.xml'), notes)
    const attachments = [{ url: files.add('bench-ledger.csv', ledger) }, { url: files.add('bench-notes.xml', notes) }]
    const out = join(WORK, 'edited')
    const rows: Array<{ input: string; file: string; bytes: Buffer; edit: Record<string, unknown>; qpdf: string[] }> = [
      {
        input: `500 pages (${(plain.length / 1024).toFixed(0)} KB), page 2- turned, a stamp on every page`,
        file: 'edit.pdf',
        bytes: plain,
        edit: { rotate: { angle: 90, pages: '2-' }, stamp: { text: 'PAID', angle: 45 } },
        qpdf: ['--rotate=+90:2-500', '--overlay', 'stamp.pdf', '--to=1-500', '--from=1', '--repeat=1', '--'],
      },
      {
        input: `500 pages (${(plain.length / 1024).toFixed(0)} KB), a PNG picture stamped on every page`,
        file: 'edit.pdf',
        bytes: plain,
        edit: { stamp: { image: logoUrl, angle: 30 } },
        qpdf: ['--overlay', 'stamp-picture.pdf', '--to=1-500', '--from=1', '--repeat=1', '--'],
      },
      {
        input: `500 pages (${(plain.length / 1024).toFixed(0)} KB), two files embedded (${((ledger.length + notes.length) / 1024 ** 2).toFixed(1)} MB)`,
        file: 'edit.pdf',
        bytes: plain,
        edit: { attachments },
        qpdf: [
          ...['ledger.csv', 'notes.xml'].flatMap((name) => [
            '--add-attachment',
            name,
            `--key=bench-${name}`,
            `--filename=bench-${name}`,
            '--replace',
            '--',
          ]),
        ],
      },
      {
        input: `50 scanned pages (${(scans.length / 1024 ** 2).toFixed(1)} MB), compressed and linearized`,
        file: 'scans.pdf',
        bytes: scans,
        edit: { compress: true, linearize: true },
        qpdf: [
          '--object-streams=generate',
          '--compress-streams=y',
          '--recompress-flate',
          '--compression-level=9',
          '--linearize',
        ],
      },
      {
        input: `500 pages (${(plain.length / 1024).toFixed(0)} KB), protected: AES-256, a password, no printing`,
        file: 'edit.pdf',
        bytes: plain,
        edit: { encrypt: { userPassword: 'bench secret', print: 'none' } },
        qpdf: ['--encrypt', 'bench secret', 'bench secret', '256', '--print=none', '--modify=all', '--extract=y', '--'],
      },
    ]
    for (const row of rows) {
      const url = files.add(`bench-${row.file}`, row.bytes)
      await measure(
        { utility: 'edit-pdf', input: row.input, tool: 'qpdf', target: { against: 'anchor', ratio: 1.3 } },
        {
          native: () => timed('qpdf', [row.file, ...row.qpdf, join(out, row.file)], { cwd: WORK }),
          output: `${out}/`,
          before: fresh(out),
          runner: runner('edit-pdf', { url, ...row.edit }),
          platformInput: { url, ...row.edit },
        },
      )
    }
    // Ghostscript's rewrites against Ghostscript run with the same arguments (the runner adds
    // qpdf's description before and its information pass after a PDF/A rewrite).
    writeFileSync(join(WORK, 'pdfa.ps'), pdfaDefinition())
    const rewrites: Array<{ input: string; file: string; bytes: Buffer; edit: RewriteOptions }> = [
      {
        input: `500 pages (${(plain.length / 1024).toFixed(0)} KB), made PDF/A-2b`,
        file: 'edit.pdf',
        bytes: plain,
        edit: { pdfa: 'PDF/A-2b' },
      },
      {
        input: `50 scanned pages (${(scans.length / 1024 ** 2).toFixed(1)} MB), pictures as JPEG of quality 50`,
        file: 'scans.pdf',
        bytes: scans,
        edit: { imageQuality: 50 },
      },
    ]
    for (const row of rewrites) {
      const url = files.add(`bench-${row.file}`, row.bytes)
      await measure(
        { utility: 'edit-pdf', input: row.input, tool: 'gs', target: { against: 'anchor', ratio: 1.3 } },
        {
          native: () =>
            timed(
              GHOSTSCRIPT,
              ghostscriptArgs(row.edit, { input: row.file, output: join(out, row.file), pdfaDefinition: 'pdfa.ps' }),
              { cwd: WORK },
            ),
          output: `${out}/`,
          before: fresh(out),
          runner: runner('edit-pdf', { url, ...row.edit }),
          platformInput: { url, ...row.edit },
        },
      )
    }
    rmSync(out, { recursive: true, force: true })
  }

  // pdf-info: the facts of a PDF against curl fetching it and qpdf describing it (what the runner
  // does: the download, qpdf's JSON description and page count); nothing is stored on either side.
  if (wanted('pdf-info')) {
    say('pdf-info: a 500-page PDF and 50 scanned pages, vs curl + qpdf describing them')
    const rows = [
      { file: 'info-pages.pdf', bytes: await makePdf(500), what: '500 pages' },
      { file: 'info-scans.pdf', bytes: await makeHeavyPdf(50, 100_000), what: '50 scanned pages' },
    ]
    for (const row of rows) {
      const url = files.add(`bench-${row.file}`, row.bytes)
      await measure(
        {
          utility: 'pdf-info',
          input: `${row.what} (${(row.bytes.length / 1024 ** 2).toFixed(1)} MB)`,
          tool: 'curl + qpdf',
          target: { against: 'native', ratio: 1.3 },
        },
        {
          native: () =>
            timed(
              'sh',
              [
                '-c',
                `curl -sf -o fetched.pdf '${url}' && qpdf --json=2 --json-key=encrypt --json-key=qpdf --json-object=trailer fetched.pdf >/dev/null && qpdf --show-npages fetched.pdf >/dev/null`,
              ],
              { cwd: WORK },
            ),
          runner: runner('pdf-info', { url }),
          platformInput: { url },
        },
      )
    }
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
    const zipTo = (dir: string, archive: string) => ({
      native: () => timed('zip', ['-q', '-r', '-6', archive, '.'], { cwd: dir }),
      output: archive,
      before: () => rmSync(archive, { force: true }),
    })
    if (wanted('zip-files')) {
      await measure(
        {
          utility: 'zip-files',
          input: `500 files, ${(total / 1024 ** 2).toFixed(0)} MB`,
          tool: 'zip -r -6',
          target: { against: 'native', ratio: 1.2, rssMb: 64 },
        },
        {
          ...zipTo(zipDir, join(WORK, 'z.zip')),
          runner: runner('zip-files', { files: list }),
          platformInput: { files: list },
        },
      )
      rmSync(join(WORK, 'z.zip'), { force: true })
    }
    // The archive unzip-files reads.
    execFileSync('zip', ['-q', '-r', '-6', join(WORK, 'native.zip'), '.'], { cwd: zipDir })

    if (wanted('zip-files') && LARGE) {
      // The same runner on many more bytes: its memory must not grow with the total.
      for (const [count, each, label] of [
        [500, 1024 ** 2, '500 × 1 MB'],
        [4, 200 * 1024 ** 2, '4 × 200 MB'],
      ] as const) {
        say(`zip-files: ${label} files (memory bound)`)
        const big: Array<{ url: string; fileName: string }> = []
        const bigDir = join(WORK, 'zipbig')
        mkdirSync(bigDir, { recursive: true })
        for (let i = 0; i < count; i++) {
          const body =
            count > 10
              ? textFile(1000 + i, each)
              : Buffer.concat(Array.from({ length: 20 }, (_, j) => textFile(i * 100 + j, each / 20)))
          writeFileSync(join(bigDir, `big-${i}.log`), body)
          big.push({ url: files.add(`big${count}-${i}.log`, body, 'text/plain'), fileName: `big-${i}.log` })
        }
        await measure(
          {
            utility: 'zip-files',
            input: `${label} files`,
            tool: 'zip -r -6',
            target: { against: 'native', ratio: 1.2, rssMb: 64 },
          },
          { ...zipTo(bigDir, join(WORK, 'big.zip')), runner: runner('zip-files', { files: big }), runs: 1 },
        )
        for (let i = 0; i < count; i++) files.remove(`big${count}-${i}.log`)
        rmSync(bigDir, { recursive: true, force: true })
        rmSync(join(WORK, 'big.zip'), { force: true })
      }
    }
  }

  // unzip-files: the 500-file archive made by zip.
  if (wanted('unzip-files')) {
    say('unzip-files: 500 entries vs unzip')
    const archive = readFileSync(join(WORK, 'native.zip'))
    const url = files.add('bench.zip', archive, 'application/zip')
    const out = join(WORK, 'unzipped')
    const unzipTo = (zip: string) => ({
      native: () => timed('unzip', ['-q', '-o', zip, '-d', out]),
      output: `${out}/`,
      before: () => rmSync(out, { recursive: true, force: true }),
    })
    await measure(
      {
        utility: 'unzip-files',
        input: `500 entries, ${(archive.length / 1024 ** 2).toFixed(0)} MB zip`,
        tool: 'unzip',
        target: { against: 'anchor', ratio: 1.3 },
      },
      { ...unzipTo(join(WORK, 'native.zip')), runner: runner('unzip-files', { url }), platformInput: { url } },
    )
    if (LARGE) {
      // A 1 GB archive: ten 100 MB entries that do not compress (docs/api.md's archive limit).
      say('unzip-files: a 1 GB archive')
      const bigDir = join(WORK, 'unzipbig')
      mkdirSync(bigDir, { recursive: true })
      for (let i = 0; i < 10; i++) writeFileSync(join(bigDir, `blob-${i}.bin`), randomBytes(100 * 1024 ** 2 - 4096))
      execFileSync('zip', ['-q', '-r', '-1', join(WORK, 'big.zip'), '.'], { cwd: bigDir })
      rmSync(bigDir, { recursive: true, force: true })
      const bigZip = readFileSync(join(WORK, 'big.zip'))
      const bigUrl = files.add('big.zip', bigZip, 'application/zip')
      await measure(
        {
          utility: 'unzip-files',
          input: `10 entries, ${(bigZip.length / 1024 ** 3).toFixed(2)} GB zip`,
          tool: 'unzip',
          target: { against: 'anchor', ratio: 1.3 },
        },
        { ...unzipTo(join(WORK, 'big.zip')), runner: runner('unzip-files', { url: bigUrl }), runs: 1 },
      )
      files.remove('big.zip')
      rmSync(join(WORK, 'big.zip'), { force: true })
    }
    rmSync(out, { recursive: true, force: true })
  }

  // html-pdf: a page with a stylesheet and a 400-row table.
  if (wanted('html-pdf')) {
    // The same Chromium build the runner drives (its DUTIL_CHROMIUM_PATH, else the headless shell).
    const browser = process.env.DUTIL_CHROMIUM_PATH || '/usr/bin/chromium-headless-shell'
    say(`html-pdf vs ${browser} --headless --print-to-pdf`)
    files.add(
      'bench.css',
      Buffer.from(
        'body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;width:100%}td,th{border:1px solid #999;padding:2px 6px}h1{color:#235}',
      ),
      'text/css',
    )
    const profile = join(WORK, 'chromium-profile')
    const chromium = (url: string) => () =>
      timed(browser, [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        `--user-data-dir=${profile}`,
        '--no-pdf-header-footer',
        `--print-to-pdf=${join(WORK, 'cli.pdf')}`,
        url,
      ])
    for (const [name, rowsN, label] of [
      ['report.html', 400, 'report, 400-row table + CSS'],
      ['long.html', 12_000, 'long report, 12,000-row table'],
    ] as const) {
      const url = files.add(name, benchPage(rowsN), 'text/html')
      await measure(
        {
          utility: 'html-pdf',
          input: label,
          tool: 'chromium --print-to-pdf',
          target: { against: 'native', ratio: 1.1 },
        },
        {
          native: chromium(url),
          output: join(WORK, 'cli.pdf'),
          runner: runner('html-pdf', { url }),
          platformInput: rowsN === 400 ? { url } : undefined,
          runs: rowsN === 400 ? RUNS : 1,
        },
      )
    }
  }

  // office-pdf in job mode (LibreOffice started per job) against LibreOffice's own cold
  // `soffice --convert-to pdf` (a fresh profile per document, as a fresh pod has).
  if (wanted('office-pdf')) {
    say('office-pdf vs soffice --convert-to pdf, cold')
    const fixture = (name: string) => readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'documents', name))
    const csvRows = Array.from(
      { length: 2000 },
      (_, i) => `item ${i},${i * 3},${(i * 1.25).toFixed(2)},note ${i},=${i}+1`,
    )
    const documents: Array<[string, string, Buffer]> = [
      ['text.docx', '1-page docx', fixture('text.docx')],
      ['report-30.docx', '30-page docx, a table and an image a page', fixture('report-30.docx')],
      ['sheets.xlsx', '3-sheet xlsx', fixture('sheets.xlsx')],
      ['slides-20.pptx', '20-slide pptx', fixture('slides-20.pptx')],
      ['picture.fodt', '1-page flat OpenDocument text with a picture', fixture('picture.fodt')],
      ['table.csv', '2,000-row CSV, 5 columns', Buffer.from(`name,count,price,note,formula\n${csvRows.join('\n')}\n`)],
    ]
    let cold = 0
    for (const [name, input, bytes] of documents) {
      writeFileSync(join(WORK, name), bytes)
      const url = files.add(name, bytes, 'application/octet-stream')
      await measure(
        {
          utility: 'office-pdf',
          input,
          tool: 'soffice --convert-to pdf, cold',
          target: { against: 'native', ratio: 1.2 },
        },
        {
          native: () =>
            timed('soffice', [
              `-env:UserInstallation=file://${join(WORK, `office-cold-${cold++}`)}`,
              '--headless',
              '--convert-to',
              'pdf',
              '--outdir',
              join(WORK, 'office-out'),
              join(WORK, name),
            ]),
          output: join(WORK, 'office-out', name.replace(/\.\w+$/, '.pdf')),
          runner: runner('office-pdf', { url }),
          platformInput: { url },
        },
      )
    }
  }

  // xls-to-xlsx: 4 sheets × 5000 rows × 8 columns.
  if (wanted('xls-to-xlsx')) {
    say('xls-to-xlsx vs LibreOffice --convert-to xlsx')
    const xls = benchWorkbook()
    writeFileSync(join(WORK, 'bench.xls'), xls)
    const url = files.add('bench.xls', xls, 'application/vnd.ms-excel')
    const lo = (profile: () => string) => () =>
      timed('soffice', [
        `-env:UserInstallation=file://${profile()}`,
        '--headless',
        '--convert-to',
        'xlsx',
        '--outdir',
        join(WORK, 'lo-out'),
        join(WORK, 'bench.xls'),
      ])
    const input = `4 sheets × 5,000 rows, ${(xls.length / 1024 ** 2).toFixed(1)} MB`
    const output = join(WORK, 'lo-out', 'bench.xlsx')
    const ours = runner('xls-to-xlsx', { url })
    // A fresh pod starts LibreOffice with an empty profile every time: that is the cold row.
    let cold = 0
    await measure(
      {
        utility: 'xls-to-xlsx',
        input,
        tool: 'soffice, cold (fresh pod)',
        target: { against: 'native', ratio: 1.5, faster: true, rssOfNative: true },
      },
      { native: lo(() => join(WORK, `lo-cold-${cold++}`)), output, runner: ours },
    )
    const warm = join(WORK, 'lo-profile')
    await lo(() => warm)()
    await measure(
      {
        utility: 'xls-to-xlsx',
        input,
        tool: 'soffice, warm profile',
        target: { against: 'native', ratio: 1, faster: true, rssOfNative: true },
      },
      { native: lo(() => warm), output, runner: ours, platformInput: { url } },
    )
  }
} finally {
  await files.stop()
  await platform.stop()
  for (const f of readdirSync(WORK)) if (f.startsWith('time-')) rmSync(join(WORK, f), { force: true })
}

const header = [
  'utility',
  'input',
  'native tool',
  'native',
  'native + mc cp',
  'runner',
  'runner work / storage',
  'vs native',
  'vs native + mc',
  'target',
  'native RSS',
  'runner RSS',
  'platform totalMs',
  'met',
]
const ratioText = (r: Row, against: Measured | null) => {
  if (!against) return '—'
  return r.target.faster
    ? `${(against.ms / r.runner.ms).toFixed(2)}× faster`
    : `${(r.runner.ms / against.ms).toFixed(2)}×`
}
const table = rows.map((r) => {
  const base = r.target.against === 'anchor' ? r.anchor! : r.native
  const timeOk = r.target.faster ? base.ms / r.runner.ms >= r.target.ratio : r.runner.ms / base.ms <= r.target.ratio
  const rssCap = r.target.rssOfNative ? r.native.rssMb : r.target.rssMb
  const rssOk = rssCap === undefined || r.runner.rssMb <= rssCap
  const of = r.target.against === 'anchor' ? 'native + mc' : 'native'
  const target =
    (r.target.faster ? `≥ ${r.target.ratio}× faster than ${of}` : `≤ ${r.target.ratio}× ${of}`) +
    (r.target.rssOfNative ? ', RSS ≤ native' : r.target.rssMb ? `, ≤ ${r.target.rssMb} MB` : '')
  const split =
    r.runner.upstreamMs === undefined ? '—' : `${fmtS(r.runner.upstreamMs)} / ${fmtS(r.runner.storageMs ?? 0)}`
  return [
    r.utility,
    r.input,
    r.tool,
    fmtS(r.native.ms),
    r.anchor ? fmtS(r.anchor.ms) : '—',
    fmtS(r.runner.ms),
    split,
    ratioText(r, r.native),
    ratioText(r, r.anchor),
    target,
    fmtMb(r.native.rssMb),
    fmtMb(r.runner.rssMb),
    r.platformMs === null ? '—' : String(r.platformMs),
    timeOk && rssOk ? 'yes' : `no${timeOk ? '' : ' (time)'}${rssOk ? '' : ' (memory)'}`,
  ]
})
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)))
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
console.log(
  `\nRunners vs native tools (${RUNS} runs each for the small inputs, one for the large; median time, largest peak RSS; runner = its program as the pod runs it, incl. start-up, download and upload; native + mc cp = the tool, then MinIO's client storing its outputs in the same MinIO)\n`,
)
console.log(line(header))
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`)
for (const row of table) console.log(line(row))
