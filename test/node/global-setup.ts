import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { BIN_DIR, offsetPorts, REPO_ROOT, startPlatform, TEST_PORTS, type Platform } from '../platform/platform.js'
import { paths, type RealNodeLayout } from '../real-node/node-config.js'
import {
  ensureNodeAddress,
  importDockerImages,
  NODE_IP,
  nodeDiagnostics,
  POD_CIDR,
  readinessBrief,
  realNodeBlocker,
  realNodeLayout,
  startRealNode,
  stopRealNode,
} from '../real-node/real-node.js'
import { makeTestCa, type TestCa } from '../support/test-ca.js'
import { CHART, chartValues, imageRef, NS, RELEASE } from './chart-values.js'
import { waitForServiceAnswer } from './service-answer.js'
import { SERVICES_HOST, TEST_NS, testServicesManifest } from './test-services.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why this host cannot run the real node (every test is skipped with it), or ''. */
    nodeBlocker: string
    kubeconfigPath: string
    platformDir: string
    storage: { endpoint: string; accessKey: string; secretKey: string; bucket: string; region: string }
    redisUrl: string
    databaseUrl: string
    /** The chart's gateway, through its Service's ClusterIP (kube-proxy on this host). */
    gatewayUrl: string
    imageTag: string
    /** The database URL as pods reach it. */
    podDatabaseUrl: string
    /** The tests' file server (test-services pod, http) as this host reaches it, and as runners do. */
    filesUrl: string
    podFilesUrl: string
    /** Where callbacks go: the test-services pod's https receiver, by its Service's DNS name. */
    callbackBase: string
    /** The CA (PEM file) that signs the receiver's certificate; no public trust store has it. */
    testCaFile: string
    /** np-target's pod address and its Service's ClusterIP (both must stay out of a runner's reach). */
    npTarget: { podIp: string; clusterIp: string }
    /** The API server's own address:port (behind the `kubernetes` Service). */
    apiServerAddress: string
    /** kube-controller-manager's and kube-scheduler's secure ports on loopback (their /metrics). */
    controlPlanePorts: { controllerManager: number; scheduler: number }
    /** The node's containerd (for nodeCtr). */
    containerdSocket: string
    /**
     * Where a test's registry listens (the test starts it), the folder of containerd's hosts.toml
     * files, and containerd's content store (the blobs of the node's images).
     */
    registry: { address: string; hostsDir: string; contentDir: string }
  }
}

/** Ports of its own: `make test` runs this tier beside the integration tests. */
const NODE_PORTS = offsetPorts(TEST_PORTS, 300)

let platform: Platform | undefined
let node: RealNodeLayout | undefined
let testCa: TestCa | undefined

/** Why make test-node skipped, for the summary (test/print-summary.mjs reads it). */
export const SKIP_FILE = join(REPO_ROOT, '.test-results.node-skipped.txt')
/** Why the set-up failed, in a few lines, for the summary's end (what CI keeps of the output). */
export const SETUP_FAILURE_FILE = join(REPO_ROOT, '.test-results.node-setup-failure.txt')

/**
 * The real-node tier: the control plane, Redis, PostgreSQL and MinIO as for the integration
 * tests, no node agent; a real kubelet with containerd and runc, kube-proxy, CoreDNS and
 * kube-router joined to it; our images imported into containerd; the chart installed by Helm.
 */
export async function setup(project: TestProject): Promise<void> {
  rmSync(SKIP_FILE, { force: true })
  rmSync(SETUP_FAILURE_FILE, { force: true })
  const blocker = realNodeBlocker()
  project.provide('nodeBlocker', blocker ?? '')
  if (blocker) {
    writeFileSync(SKIP_FILE, `${blocker}\n`)
    process.stdout.write(`[real-node] skipped: ${blocker}\n`)
    return
  }
  try {
    await startAll(project)
  } catch (err) {
    // The error itself carries the diagnostics: a summary that shows only the error still says why.
    const brief = platform ? readinessBrief(platform.kubeconfigPath) : ''
    const diagnostics = platform ? nodeDiagnostics(platform.dir, platform.kubeconfigPath, brief) : ''
    writeFileSync(
      SETUP_FAILURE_FILE,
      `${String((err as Error).message)
        .split('\n')[0]
        .slice(0, 300)}\n${brief}`,
    )
    await teardown()
    throw new Error(`real-node setup failed: ${(err as Error).message}\n${diagnostics}`, { cause: err })
  }
}

async function startAll(project: TestProject): Promise<void> {
  const started = Date.now()
  const say = (m: string) =>
    process.stdout.write(`[real-node] ${m} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`)
  const tag = process.env.DUTIL_IMAGE_TAG
  if (!tag) throw new Error('DUTIL_IMAGE_TAG names the images to test (make test-node sets it)')
  ensureNodeAddress(NODE_IP)
  platform = await startPlatform({
    dir: join(REPO_ROOT, '.test-node'),
    ports: NODE_PORTS,
    fresh: true,
    nodeAddress: NODE_IP,
    podCidr: POD_CIDR,
    nodeAgent: false,
    programs: false,
    allowLoopbackUrls: false,
    testHooks: false,
    progress: (m) => say(m),
  })
  const server = `https://${NODE_IP}:${NODE_PORTS.apiserver}`
  node = realNodeLayout(platform.dir, server)
  await startRealNode(node, {
    platformDir: platform.dir,
    server,
    adminKubeconfig: platform.kubeconfigPath,
    supervisor: platform.supervisor,
    progress: say,
  })
  say('node Ready, cluster DNS up')

  // Our images, as `make images` built them, into the node's containerd (through a registry of
  // the run's own on loopback: only the layers the store lacks move).
  const images = execFileSync(
    'docker',
    ['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', `reference=${imageRef('*', tag)}`],
    { encoding: 'utf8' },
  )
    .split('\n')
    .filter(Boolean)
  if (!images.some((i) => i.endsWith(`/dutil-gateway:${tag}`)))
    throw new Error(`no images tagged ${tag}: build them first (images/build-images.sh)`)
  const { imported, named } = await importDockerImages(node, images, `127.0.0.1:${NODE_PORTS.minio + 11}`)
  say(
    `images: ${imported.length} of ${images.length} imported, ${named.length} named anew (the node's store had them), ${images.length - imported.length - named.length} there already`,
  )

  const kubectl = (args: string[], input?: string) =>
    execFileSync(join(BIN_DIR, 'kubectl'), ['--kubeconfig', platform!.kubeconfigPath, ...args], {
      input,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'inherit'],
    })

  // The tests' own servers (inputs, callbacks, a target runners must not reach), with an https
  // certificate from a CA of the tests' that the chart is told to trust.
  testCa = makeTestCa('dutil-node-ca-', [SERVICES_HOST])
  kubectl(
    ['apply', '-f', '-'],
    testServicesManifest({
      image: imageRef('gateway', tag),
      tlsCert: readFileSync(testCa.certFile, 'utf8'),
      tlsKey: readFileSync(testCa.keyFile, 'utf8'),
    }),
  )
  kubectl(['-n', TEST_NS, 'wait', '--for=condition=Ready', 'pod/test-services', 'pod/np-target', '--timeout=120s'])
  const jsonpath = (args: string[], path: string) => kubectl([...args, '-o', `jsonpath={${path}}`])
  const servicesPodIp = jsonpath(['-n', TEST_NS, 'get', 'pod', 'test-services'], '.status.podIP')
  const servicesClusterIp = jsonpath(['-n', TEST_NS, 'get', 'service', 'test-services'], '.spec.clusterIP')
  const npTarget = {
    podIp: jsonpath(['-n', TEST_NS, 'get', 'pod', 'np-target'], '.status.podIP'),
    clusterIp: jsonpath(['-n', TEST_NS, 'get', 'service', 'np-target'], '.spec.clusterIP'),
  }
  kubectl(['-n', NS, 'create', 'configmap', 'dutil-test-ca', `--from-file=ca.crt=${testCa.caFile}`])
  say('test services up')

  const podDatabaseUrl = platform.databaseUrl.replace('@127.0.0.1:', `@${NODE_IP}:`)
  kubectl(['-n', NS, 'create', 'secret', 'generic', 'dutil-database', `--from-literal=url=${podDatabaseUrl}`])
  const helm = (...args: string[]) => {
    try {
      return execFileSync(join(BIN_DIR, 'helm'), ['--kubeconfig', platform!.kubeconfigPath, ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    } catch (err) {
      const { stderr, status } = err as { stderr?: string; status?: number }
      throw new Error(`helm ${args[0]} exited ${status}: ${(stderr ?? '').trim()}`)
    }
  }
  helm(
    'install',
    RELEASE,
    CHART,
    '--namespace',
    NS,
    // The platform applied the CRDs with kubectl (crds/), as a cluster whose CRDs came first has
    // them: the release takes them over (and upgrades them from then on).
    '--take-ownership',
    '--force-conflicts',
    '--wait',
    '--timeout',
    '300s',
    ...chartValues({
      tag,
      storage: platform.storage,
      redisUrl: platform.redisUrl.replace('127.0.0.1', NODE_IP),
      // The test services by the address their name resolves to (what dutil checks) and the pod's
      // (what the NetworkPolicy sees after kube-proxy's DNAT); nothing else private.
      allowedPrivateNetworks: [`${servicesClusterIp}/32`, `${servicesPodIp}/32`],
      trustedCaConfigMap: 'dutil-test-ca',
    }),
  )
  say('helm install: every pod ready')
  const clusterIp = kubectl(['-n', NS, 'get', 'service', `${RELEASE}-gateway`, '-o', 'jsonpath={.spec.clusterIP}'])
  const gatewayUrl = `http://${clusterIp}`
  // Helm waited for ready pods; kube-proxy's rules for the new Service follow on their own clock.
  await waitForServiceAnswer({
    url: gatewayUrl,
    path: '/readyz',
    namespace: NS,
    service: `${RELEASE}-gateway`,
    kubectl: (args) => kubectl(args),
    platformDir: platform.dir,
    timeoutMs: 120_000,
    progress: say,
  })
  say('chart installed, gateway answers on its Service')

  project.provide('kubeconfigPath', platform.kubeconfigPath)
  project.provide('platformDir', platform.dir)
  project.provide('storage', platform.storage)
  project.provide('redisUrl', platform.redisUrl)
  project.provide('databaseUrl', platform.databaseUrl)
  project.provide('gatewayUrl', gatewayUrl)
  project.provide('imageTag', tag)
  project.provide('podDatabaseUrl', podDatabaseUrl)
  project.provide('filesUrl', `http://${servicesPodIp}:8080/files`)
  project.provide('podFilesUrl', `http://${SERVICES_HOST}/files`)
  project.provide('callbackBase', `https://${SERVICES_HOST}/callbacks`)
  project.provide('npTarget', npTarget)
  project.provide('apiServerAddress', `${NODE_IP}:${NODE_PORTS.apiserver}`)
  project.provide('controlPlanePorts', {
    controllerManager: NODE_PORTS.controllerManager,
    scheduler: NODE_PORTS.scheduler,
  })
  project.provide('containerdSocket', paths(node).containerdSocket)
  project.provide('testCaFile', testCa!.caFile)
  project.provide('registry', {
    address: `${NODE_IP}:${NODE_PORTS.minio + 10}`,
    hostsDir: paths(node).registryHosts,
    contentDir: join(paths(node).containerdRoot, 'io.containerd.content.v1.content'),
  })
}

export async function teardown(): Promise<void> {
  if (node && platform) await stopRealNode(node, platform.supervisor)
  await platform?.stop()
  testCa?.remove()
}
