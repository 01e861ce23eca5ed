import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import pg from 'pg'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { ensurePartitions } from '../../platform/db/partitions.js'
import { PeopleStore } from '../../platform/people-store.js'
import { BIN_DIR, REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'
import { percentile } from './percentile.js'

/**
 * `make bench-scale`: the job record at production volume (docs/benchmarks.md). For each N, one
 * key's history holds N jobs (and 20 other keys hold N between them), seeded straight into
 * PostgreSQL over the last 85 days; then, through the gateway: the first page (25 and 100), a
 * page 1,000 jobs deep, the status=failed filter, an archived job by id, the console's 90-day
 * usage; the programs' RSS; UtilityJobs in etcd and etcd's database size.
 *
 *   BENCH_SCALE_SIZES=10000,100000,1000000 (default)   BENCH_SCALE_SAMPLES=500 (default)
 */
const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number)
const SAMPLES = Number(process.env.BENCH_SCALE_SAMPLES ?? 500)
const OTHER_KEYS = 20
const DAYS = 85

async function time(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await fn(i)
    out.push(performance.now() - t0)
  }
  return out
}

/** SQL-side ULIDs whose time part is the row's created_at: ids the gateway reads back by time. */
const SEED_FUNCTIONS = `
CREATE OR REPLACE FUNCTION bench_ulid(ms bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ'; t text := ''; r text := ''; i int;
BEGIN
  FOR i IN 1..10 LOOP t := substr(a, (ms % 32)::int + 1, 1) || t; ms := ms / 32; END LOOP;
  FOR i IN 1..16 LOOP r := r || substr(a, floor(random() * 32)::int + 1, 1); END LOOP;
  RETURN 'job_' || t || r;
END $$;`

async function seed(db: pg.Pool, keyId: string, count: number, now: number): Promise<void> {
  // Jobs spread evenly over the last DAYS days; 2 % failed, 1 % cancelled, the rest succeeded.
  await db.query(
    `WITH s AS (SELECT g, ($3::bigint - (random() * $4::bigint)::bigint) AS ms FROM generate_series(1, $2::int) g),
          r AS (SELECT g, ms, bench_ulid(ms) AS id, CASE WHEN g % 50 = 0 THEN 'failed' WHEN g % 100 = 1 THEN 'cancelled' ELSE 'succeeded' END AS state FROM s)
     INSERT INTO jobs (id, created_at, api_key_id, api_key_name, source, utility, mode, state, input_key, metadata, started_at, finished_at, queue_ms, upstream_ms, storage_ms, total_ms, result, error)
     SELECT id, timestamptz 'epoch' + ms * interval '1 millisecond', $1, 'bench', 'api',
            (ARRAY['split-pdf','html-pdf','zip-files','unzip-files','xls-to-xlsx'])[1 + g % 5], 'async', state, '_jobs/' || id || '/input.json', NULL,
            timestamptz 'epoch' + (ms + 50) * interval '1 millisecond', timestamptz 'epoch' + (ms + 1200) * interval '1 millisecond', 50, 900, 200, 1200,
            CASE WHEN state = 'succeeded' THEN jsonb_build_object('files', jsonb_build_array(jsonb_build_object('key', 'split-pdf/x/' || id || '/page-001.pdf', 'name', 'page-001.pdf', 'size', 1000, 'contentType', 'application/pdf')), 'extras', '{}'::jsonb) END,
            CASE WHEN state = 'failed' THEN '{"code":"upstream_rejected","message":"not a PDF"}'::jsonb END
     FROM r`,
    [keyId, count, now, DAYS * 86_400_000],
  )
}

async function usageFromJobs(db: pg.Pool): Promise<void> {
  await db.query('TRUNCATE usage_daily')
  await db.query(`INSERT INTO usage_daily (day, source, api_key_id, user_email, utility, api_key_name, jobs, succeeded, failed, cancelled, errors, total_ms, upstream_ms, output_bytes)
    SELECT (created_at AT TIME ZONE 'UTC')::date, source, api_key_id, '', utility, max(api_key_name), count(*), count(*) FILTER (WHERE state = 'succeeded'), count(*) FILTER (WHERE state = 'failed'),
           count(*) FILTER (WHERE state = 'cancelled'), CASE WHEN count(*) FILTER (WHERE state = 'failed') > 0 THEN jsonb_build_object('upstream_rejected', count(*) FILTER (WHERE state = 'failed')) ELSE '{}'::jsonb END,
           sum(total_ms), sum(upstream_ms), 0
    FROM jobs GROUP BY 1, 2, 3, 5`)
  // Steady state, as autovacuum would leave a table that grew: measured after, not during.
  await db.query('VACUUM (ANALYZE) jobs')
  await db.query('VACUUM (ANALYZE) usage_daily')
}

/** The database's own time for the first page of a key's list (EXPLAIN ANALYZE), in ms. */
async function explainMs(db: pg.Pool, sql: string, args: unknown[]): Promise<string> {
  const res = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, args)
  const lines = res.rows.map((r) => r['QUERY PLAN'])
  const exec = lines.find((l) => l.startsWith('Execution Time'))
  return `${exec?.replace('Execution Time: ', '') ?? '?'} (${lines[0].trim().split('  ')[0]}; ${lines.filter((l) => /Index|Seq Scan/.test(l)).length} scans)`
}

/** Resident memory and V8 heap in use, MB, from a program's /metrics. */
async function memory(url: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const rss = /^process_resident_memory_bytes\s+(\S+)/m.exec(text)
  const heap = /^nodejs_heap_size_used_bytes\s+(\S+)/m.exec(text)
  return `${rss ? (Number(rss[1]) / 1048576).toFixed(0) : '?'} (heap ${heap ? (Number(heap[1]) / 1048576).toFixed(0) : '?'})`
}

async function etcdDbMb(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  const m = /^etcd_mvcc_db_total_size_in_bytes\s+(\S+)/m.exec(text)
  return m ? Number(m[1]) / 1048576 : NaN
}

/** A console session of a fresh admin (invite accepted with a password, as a person would). */
async function consoleSession(kc: KubeConfig, gatewayUrl: string): Promise<string> {
  const people = new PeopleStore(kc, 'dutil')
  const { token } = await people.invite({ email: `bench-${Date.now()}@example.com`, role: 'admin', invitedBy: 'bench' })
  const res = await fetch(`${gatewayUrl}/console/api/invites/accept`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: gatewayUrl },
    body: JSON.stringify({ token, name: 'Bench', password: 'correct horse battery staple 42' }),
  })
  if (res.status !== 201) throw new Error(`console sign-up failed: ${res.status} ${await res.text()}`)
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
}

const platform = await startPlatform({
  dir: join(REPO_ROOT, '.bench'),
  ports: TEST_PORTS,
  fresh: true,
  allowLoopbackUrls: true,
  testHooks: false,
})
const db = new pg.Pool({ connectionString: platform.databaseUrl, max: 4 })
const rows: string[] = []
try {
  const kc = new KubeConfig()
  kc.loadFromFile(platform.kubeconfigPath)
  const { key, id: keyId } = await new ApiKeyAdmin(kc, 'dutil').create({
    name: 'bench',
    utilities: [],
    rateLimitPerMinute: 10_000_000,
  })
  const headers = { Authorization: `Bearer ${key}` }
  const get = async (path: string) => {
    const res = await fetch(`${platform.gatewayUrl}${path}`, { headers })
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return res.json() as Promise<any>
  }
  const cookie = await consoleSession(kc, platform.gatewayUrl)
  const now = Date.now()
  await ensurePartitions(db, now - (DAYS + 1) * 86_400_000, DAYS + 3)
  await db.query(SEED_FUNCTIONS)
  let seeded = 0
  for (const n of SIZES) {
    const t0 = Date.now()
    await seed(db, keyId, n - seeded, now)
    for (let k = 0; k < OTHER_KEYS; k++)
      await seed(db, `key_OTHER${String(k).padStart(21, '0')}`, Math.ceil((n - seeded) / OTHER_KEYS), now)
    seeded = n
    await usageFromJobs(db)
    const seedSeconds = (Date.now() - t0) / 1000
    // A fresh gateway for every N: the same requests each time, so its memory compares across N.
    await platform.supervisor.stopOne('gateway')
    platform.startGateway()
    for (let i = 0; i < 100; i++) {
      if ((await fetch(`${platform.gatewayUrl}/readyz`).catch(() => null))?.status === 200) break
      await new Promise((r) => setTimeout(r, 200))
    }
    const plan = await explainMs(
      db,
      `SELECT id FROM jobs WHERE api_key_id = $1 ORDER BY created_at DESC, id DESC LIMIT 26`,
      [keyId],
    )
    const planFailed = await explainMs(
      db,
      `SELECT id FROM jobs WHERE api_key_id = $1 AND state = 'failed' ORDER BY created_at DESC, id DESC LIMIT 26`,
      [keyId],
    )
    console.log(`N=${n}: first page in the database ${plan}; status=failed ${planFailed}`)
    // Warm up, then measure each query SAMPLES times.
    await time(20, () => get('/v1/jobs?limit=25'))
    const first25 = await time(SAMPLES, () => get('/v1/jobs?limit=25'))
    const first100 = await time(SAMPLES, () => get('/v1/jobs?limit=100'))
    let cursor: string | null = null
    for (let i = 0; i < 10; i++)
      cursor = (await get(`/v1/jobs?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).nextCursor
    const deep = await time(SAMPLES, () => get(`/v1/jobs?limit=25&cursor=${cursor}`))
    const failed = await time(SAMPLES, () => get('/v1/jobs?limit=25&status=failed'))
    const sample = (
      await db.query<{ id: string }>('SELECT id FROM jobs WHERE api_key_id = $1 ORDER BY random() LIMIT $2', [
        keyId,
        SAMPLES,
      ])
    ).rows.map((r) => r.id)
    const byId = await time(sample.length, (i) => get(`/v1/jobs/${sample[i]}`))
    // Memory after the list and job reads (the console's usage page parses rows per day × key ×
    // utility, a number bounded by days, keys and utilities, not by N: measured on its own).
    const memoryAfterReads = `${await memory(platform.gatewayUrl)} / ${await memory(`http://127.0.0.1:${TEST_PORTS.operator}`)}`
    const usageRowCount = (await db.query<{ n: string }>('SELECT count(*) AS n FROM usage_daily')).rows[0].n
    const usage = await time(Math.min(SAMPLES, 50), async () => {
      const res = await fetch(`${platform.gatewayUrl}/console/api/usage?days=90`, { headers: { Cookie: cookie } })
      if (res.status !== 200) throw new Error(`usage: ${res.status}`)
      await res.arrayBuffer()
    })
    const ujs = execFileSync(
      join(BIN_DIR, 'kubectl'),
      ['--kubeconfig', platform.kubeconfigPath, '-n', 'dutil', 'get', 'utilityjobs', '--no-headers'],
      { encoding: 'utf8' },
    )
      .split('\n')
      .filter(Boolean).length
    const total = (await db.query<{ n: string }>('SELECT count(*) AS n FROM jobs')).rows[0].n
    const f = (xs: number[]) => `${percentile(xs, 50).toFixed(1)} / ${percentile(xs, 99).toFixed(1)}`
    const row = `| ${n.toLocaleString('en')} (${Number(total).toLocaleString('en')} rows, seeded in ${seedSeconds.toFixed(0)} s) | ${f(first25)} | ${f(first100)} | ${f(deep)} | ${f(failed)} | ${f(byId)} | ${f(usage)} (${Number(usageRowCount).toLocaleString('en')} usage rows) | ${memoryAfterReads} | ${ujs} | ${(await etcdDbMb(TEST_PORTS.etcd)).toFixed(1)} |`
    rows.push(row)
    console.log(row)
  }
  const table = [
    '| N jobs of one key (all rows) | list limit 25 p50 / p99 ms | limit 100 | 1,000 deep | status=failed | job by id | console usage 90 d | gateway / operator RSS MB (V8 heap in use) | UtilityJobs | etcd DB MB |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n')
  mkdirSync(join(REPO_ROOT, '.bench'), { recursive: true })
  writeFileSync(join(REPO_ROOT, '.bench', 'scale.md'), `${table}\n`)
  console.log(`\n${table}\n\n(written to .bench/scale.md)`)
} finally {
  await db.end()
  await platform.stop()
}
