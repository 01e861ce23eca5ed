// dutil dev/test node agent: a kubelet stand-in that registers a Node and runs every pod bound
// to it as host processes, reporting status like kubelet. See README.md in this directory.
//
//   npx tsx test/node-agent/main.ts --kubeconfig <path> [--node-name n] [--work-dir d] [--image-root r]
import fs from 'node:fs/promises'
import { CoordinationV1Api, CoreV1Api, KubeConfig, VersionApi } from '@kubernetes/client-node'
import { serviceEnvFor } from './env-resolver.js'
import { errorMessage } from './kube-errors.js'
import { createLogger } from './logger.js'
import { NodeRegistration, hostFacts } from './node-registration.js'
import { detectMemoryLimits } from './memory-limits.js'
import { USAGE, UsageError, imagePresent, parseOptions, type AgentOptions } from './options.js'
import { createPodApi } from './pod-api.js'
import { PodSupervisor } from './pod-supervisor.js'
import { AbortedError } from './retry.js'

/** Agent shutdown: pods get SIGTERM, then SIGKILL after this long. */
const SHUTDOWN_GRACE_SECONDS = 5

const log = createLogger()

async function serverVersion(kc: KubeConfig): Promise<string> {
  try {
    return (await kc.makeApiClient(VersionApi).getCode()).gitVersion
  } catch (err) {
    log.warn({ err: errorMessage(err) }, 'could not read the API server version')
    return 'v0.0.0-dutil'
  }
}

async function run(opts: AgentOptions): Promise<void> {
  const kc = new KubeConfig()
  kc.loadFromFile(opts.kubeconfig)
  const server = kc.getCurrentCluster()?.server
  if (!server) throw new UsageError(`kubeconfig ${opts.kubeconfig} has no current cluster`)
  const core = kc.makeApiClient(CoreV1Api)
  await fs.mkdir(opts.workDir, { recursive: true })

  const memoryLimits = detectMemoryLimits(opts.nodeName)
  if (memoryLimits)
    log.info({ cgroup: memoryLimits.version, root: memoryLimits.root }, 'memory limits enforced with memory cgroups')
  else log.warn('no writable memory cgroup controller: container memory limits are not enforced on this host')
  log.info({ images: opts.images }, 'images on this node')

  const stopping = new AbortController()
  const registration = new NodeRegistration(
    core,
    kc.makeApiClient(CoordinationV1Api),
    log,
    opts.nodeName,
    hostFacts(await serverVersion(kc)),
  )
  const supervisor = new PodSupervisor(kc, core, opts.nodeName, {
    log,
    api: createPodApi(core),
    workDir: opts.workDir,
    imageRoot: opts.imageRoot,
    serviceEnv: serviceEnvFor(server),
    baseEnv: process.env,
    hasImage: (image) => imagePresent(image, opts.images),
    memoryLimits,
  })

  let shuttingDown = false
  const forceExit = (why: string): void => {
    log.warn({ why }, 'killing all pod processes now')
    supervisor.killAll()
    process.exit(0)
  }
  const shutdown = async (signal: string): Promise<void> => {
    // npx/tsx relay the signal they receive, so a repeated signal is expected and ignored.
    if (shuttingDown) return
    shuttingDown = true
    log.info({ signal }, 'node agent stopping')
    setTimeout(() => forceExit('shutdown took too long'), (SHUTDOWN_GRACE_SECONDS + 5) * 1000).unref()
    stopping.abort()
    registration.stop()
    try {
      await supervisor.stop(SHUTDOWN_GRACE_SECONDS)
    } catch (err) {
      log.error({ err }, 'error while stopping pods')
    }
    log.info('node agent stopped')
    process.exit(0)
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))

  log.info({ ...opts, server }, 'node agent starting')
  try {
    await registration.register(stopping.signal)
  } catch (err) {
    if (err instanceof AbortedError) return
    throw err
  }
  registration.startHeartbeat()
  if (stopping.signal.aborted) return
  await supervisor.start()
  log.info({ node: opts.nodeName }, 'node agent ready')
}

process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled rejection'))
process.on('uncaughtException', (err) => log.error({ err }, 'uncaught exception'))

let opts: AgentOptions
try {
  opts = parseOptions(process.argv.slice(2), process.env, process.cwd())
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(`${err.message}\n${USAGE}\n`)
    process.exit(2)
  }
  throw err
}
run(opts).catch((err: unknown) => {
  log.fatal({ err }, 'node agent failed')
  process.exit(1)
})
