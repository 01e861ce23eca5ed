import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'minio'
import { AssumeRoleProvider } from 'minio/dist/esm/AssumeRoleProvider.mjs'
import { newId } from '../../contract/ids.js'
import { storageGrant, tenantGrant } from '../../contract/storage-grant.js'
import { keyTenant, tenantCode } from '../../contract/tenants.js'
import { UTILITIES } from '../../runners/catalog.js'
import type { UtilityJobSpec } from '../../contract/crd-schemas.js'
import { BIN_DIR } from '../platform/platform.js'
import { until } from '../platform/wait-for.js'

/**
 * `make bench-storage-ops`: what each kind of storage request a job makes costs MinIO itself,
 * in CPU-ms of the MinIO process per request (utime + stime from /proc), on a MinIO of its own
 * (the platform's binary, one drive, loopback). The rows are the requests of a small pooled job:
 * the STS AssumeRole that issues its runner's credentials (with a job's session policy), a small
 * JSON object written and read (the input record, the result manifest), and a page written (an
 * output). BENCH_STORAGE_OPS (default 300) requests of each kind, one after another.
 */
const N = Number(process.env.BENCH_STORAGE_OPS ?? 300)
const PORT = 19_400
const ROOT = { accessKey: 'benchroot', secretKey: 'benchroot-secret-key' }
const BUCKET = 'dutil'

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  // utime and stime are fields 14 and 15 of the stat line (11 and 12 after the command).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

async function measure(pid: number, label: string, op: (i: number) => Promise<unknown>): Promise<string> {
  for (let i = 0; i < 20; i++) await op(-1 - i) // warm-up
  const before = cpuMs(pid)
  const started = performance.now()
  for (let i = 0; i < N; i++) await op(i)
  const wall = (performance.now() - started) / N
  const cpu = (cpuMs(pid) - before) / N
  return `| ${label} | ${cpu.toFixed(2)} | ${wall.toFixed(2)} ms |`
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dutil-storage-ops-'))
  const minio = spawn(join(BIN_DIR, 'minio'), ['server', dir, '--address', `127.0.0.1:${PORT}`, '--quiet'], {
    env: {
      ...process.env,
      MINIO_ROOT_USER: ROOT.accessKey,
      MINIO_ROOT_PASSWORD: ROOT.secretKey,
      MINIO_BROWSER: 'off',
      MINIO_UPDATE: 'off',
    },
    stdio: 'ignore',
  })
  try {
    const endpoint = `http://127.0.0.1:${PORT}`
    const client = new Client({ endPoint: '127.0.0.1', port: PORT, useSSL: false, ...ROOT })
    await until('minio', async () => (await fetch(`${endpoint}/minio/health/ready`)).ok)
    await client.makeBucket(BUCKET)
    const day = '2026-11-29'
    const spec = (i: number): UtilityJobSpec => ({
      jobId: `job_01M8BENCH${String(1_000_000 + i).padStart(16, '0')}`.slice(0, 30),
      utility: 'split-pdf',
      mode: 'async',
      apiKeyId: 'key_bench',
      apiKeyName: 'bench',
      createdAt: `${day}T00:00:00.000Z`,
      inputKey: `_jobs/job_${i}/input.json`,
      metadata: null,
    })
    const small = Buffer.from(JSON.stringify({ url: 'https://example.invalid/ten-pages.pdf', pages: 10 }))
    const page = Buffer.alloc(20 * 1024, 7)
    const rows: string[] = [
      await measure(minio.pid!, 'STS AssumeRole with a job’s session policy', (i) =>
        new AssumeRoleProvider({
          stsEndpoint: endpoint,
          ...ROOT,
          region: 'us-east-1',
          durationSeconds: 960,
          policy: JSON.stringify(storageGrant(spec(i), BUCKET)),
        }).getCredentials(),
      ),
      await measure(minio.pid!, 'PUT of a small JSON object (an input record)', (i) =>
        client.putObject(BUCKET, `_jobs/job_${i}/input.json`, small, small.length, {
          'Content-Type': 'application/json',
        }),
      ),
      await measure(minio.pid!, 'GET of that object', async (i) => {
        const s = await client.getObject(BUCKET, `_jobs/job_${i}/input.json`)
        for await (const _ of s) void _
      }),
      await measure(minio.pid!, 'PUT of a 20 KB page (an output)', (i) =>
        client.putObject(BUCKET, `split-pdf/${day}/job_${i}/page-001.pdf`, page, page.length, {
          'Content-Type': 'application/pdf',
        }),
      ),
    ]
    // The runner writes its outputs with its credentials: each request is checked against the
    // session policy. A batch Job's are its job's; a pool pod's its tenant's (docs/adr/0049).
    const runnerWith = async (policy: object) => {
      const c = await new AssumeRoleProvider({
        stsEndpoint: endpoint,
        ...ROOT,
        region: 'us-east-1',
        durationSeconds: 960,
        policy: JSON.stringify(policy),
      }).getCredentials()
      return new Client({
        endPoint: '127.0.0.1',
        port: PORT,
        useSSL: false,
        accessKey: c.accessKey,
        secretKey: c.secretKey,
        sessionToken: c.sessionToken,
      })
    }
    const code = tenantCode(keyTenant('key_bench'))
    const tenantJob = newId('job', Date.parse(`${day}T00:00:00.000Z`), code)
    for (const [label, policy, jobId] of [
      ['PUT of a 20 KB page with the job’s STS credentials', storageGrant(spec(0), BUCKET), spec(0).jobId],
      [
        'PUT of a 20 KB page with the tenant’s STS credentials',
        tenantGrant({ code, utility: 'split-pdf', utilities: UTILITIES.map((u) => u.slug) }, BUCKET),
        tenantJob,
      ],
    ] as const) {
      const runner = await runnerWith(policy)
      const prefix = `split-pdf/${day}/${jobId}`
      rows.push(
        await measure(minio.pid!, label, (i) =>
          runner.putObject(BUCKET, `${prefix}/page-${i + 100}.pdf`, page, page.length, {
            'Content-Type': 'application/pdf',
          }),
        ),
      )
    }
    process.stdout.write(
      [
        `make bench-storage-ops: ${N} requests of each kind, one after another, MinIO's own CPU per request`,
        '',
        '| request | MinIO CPU-ms | wall per request |',
        '|---|---|---|',
        ...rows,
        '',
      ].join('\n'),
    )
  } finally {
    minio.kill('SIGTERM')
    await new Promise((r) => minio.once('exit', r))
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
