import { join } from 'node:path'
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node'
import { Redis } from 'ioredis'
import pino from 'pino'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { RateLimiter } from '../../gateway/rate-limit.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'
import { percentile } from './percentile.js'

/**
 * `make bench`, part two: what the rate limiter adds to every request (one Redis script call,
 * measured alone), a cheap authenticated GET, and the async create route (validation, input
 * write to storage, UtilityJob create), each at p50/p99.
 */
const fmt = (name: string, xs: number[]) =>
  `${name.padEnd(40)} p50 ${percentile(xs, 50).toFixed(2)} ms   p99 ${percentile(xs, 99).toFixed(2)} ms   (n=${xs.length})`
async function time(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await fn()
    out.push(performance.now() - t0)
  }
  return out
}

const platform = await startPlatform({
  dir: join(REPO_ROOT, '.bench'),
  ports: TEST_PORTS,
  fresh: true,
  allowLoopbackUrls: true,
  testHooks: false,
})
const files = await new FileServer().start()
try {
  const kc = new KubeConfig()
  kc.loadFromFile(platform.kubeconfigPath)
  const { key, id } = await new ApiKeyAdmin(kc, 'dutil').create({
    name: 'bench',
    utilities: [],
    rateLimitPerMinute: 1_000_000,
  })
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }
  const redis = new Redis(platform.redisUrl)
  const limiter = new RateLimiter(redis, pino({ level: 'silent' }))
  await time(200, () => limiter.hit(id, Date.now()))
  const rl = await time(2000, () => limiter.hit(id, Date.now()))
  redis.disconnect()
  const get = async () => (await fetch(`${platform.gatewayUrl}/v1/utilities/split-pdf`, { headers })).arrayBuffer()
  await time(200, get)
  const gets = await time(2000, get)
  const url = files.add('one.pdf', await makePdf(1))
  const create = async () =>
    (
      await fetch(`${platform.gatewayUrl}/v1/utilities/split-pdf/jobs`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ input: { url } }),
      })
    ).arrayBuffer()
  // Cordon the node so the created jobs stay queued: what is measured is the route, not 200
  // runner processes competing for the same two cores.
  const core = kc.makeApiClient(CoreV1Api)
  const node = (await core.listNode()).items[0].metadata!.name!
  await core.patchNode(
    { name: node, body: { spec: { unschedulable: true } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  )
  await time(10, create)
  const creates = await time(200, create)
  console.log(fmt('rate limiter (Redis script, alone)', rl))
  console.log(fmt('GET /v1/utilities/{slug} (auth + limit)', gets))
  console.log(fmt('POST /v1/utilities/split-pdf/jobs (queued)', creates))
} finally {
  await files.stop()
  await platform.stop()
}
