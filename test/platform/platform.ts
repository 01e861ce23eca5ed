import { execFileSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import https from 'node:https'
import http from 'node:http'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { apiStatus } from '../../platform/kube.js'
import { SEALED_INPUTS_ENTRY } from '../../platform/input-sealing-key.js'
import { SECRET_OBJECTS } from '../../platform/secret-entries.js'
import { storageClient } from '../../platform/storage-client.js'
import { shellQuote } from '../node-agent/mount-script.js'
import { ensureDatabase, preparePostgres } from './postgres.js'
import { jaegerConfig } from './jaeger.js'
import { signalComponentGroup, writePidFile } from './pid-files.js'
import { Supervisor } from './supervisor.js'
import { tcpOpen, until } from './wait-for.js'

/** The repository root (this file also runs compiled, from dist/). */
export const REPO_ROOT = (() => {
  let d = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(d, 'package.json'))) d = dirname(d)
  return d
})()
export const BIN_DIR = join(process.env.DUTIL_CACHE ?? join(homedir(), '.cache', 'dutil'), 'bin')
export const NAMESPACE = 'dutil'

/** A kubectl for one cluster: a script at `path` running this machine's kubectl with `kubeconfig`. */
export function writeKubectl(path: string, kubeconfig: string): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(
    path,
    `#!/bin/sh\n# kubectl for the cluster of ${kubeconfig}\nexec ${shellQuote(join(BIN_DIR, 'kubectl'))} --kubeconfig ${shellQuote(kubeconfig)} "$@"\n`,
  )
  chmodSync(path, 0o755)
}
export const BUCKET = 'dutil'

export interface PlatformPorts {
  etcd: number
  etcdPeer: number
  apiserver: number
  controllerManager: number
  scheduler: number
  redis: number
  postgres: number
  minio: number
  minioConsole: number
  gateway: number
  operator: number
  /** The gateway's files host: download links point here (CSP sandbox on every answer). Tests
   * use the gateway's port + 2, + 5 and + 6 for extra replicas: not those. */
  files: number
  /** Jaeger: OTLP/HTTP in, its query API and UI, its query gRPC, its health check. */
  jaegerOtlp: number
  jaegerQuery: number
  jaegerQueryGrpc: number
  jaegerHealth: number
}

export const DEV_PORTS: PlatformPorts = {
  etcd: 2379,
  etcdPeer: 2380,
  apiserver: 6443,
  controllerManager: 10257,
  scheduler: 10259,
  redis: 6379,
  postgres: 5433,
  minio: 9000,
  minioConsole: 9001,
  gateway: 8080,
  operator: 8081,
  files: 8082,
  jaegerOtlp: 4318,
  jaegerQuery: 16686,
  jaegerQueryGrpc: 16685,
  jaegerHealth: 13133,
}

/**
 * The test platform sits on other ports, so `make test` runs beside `make dev`;
 * DUTIL_TEST_PORT_OFFSET moves it again (two test runs on one machine).
 */
export const TEST_PORTS: PlatformPorts = offsetPorts(
  {
    etcd: 23790,
    etcdPeer: 23800,
    apiserver: 16443,
    controllerManager: 20257,
    scheduler: 20259,
    redis: 16379,
    postgres: 25432,
    minio: 19000,
    minioConsole: 19001,
    gateway: 18080,
    operator: 18081,
    files: 18090,
    jaegerOtlp: 14318,
    jaegerQuery: 26686,
    jaegerQueryGrpc: 26685,
    jaegerHealth: 23133,
  },
  Number(process.env.DUTIL_TEST_PORT_OFFSET ?? 0),
)

export function offsetPorts(ports: PlatformPorts, offset: number): PlatformPorts {
  return Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, v + offset])) as unknown as PlatformPorts
}

export interface PlatformOptions {
  /** State directory: PKI, etcd data, MinIO data, logs, kubeconfig. */
  dir: string
  ports: PlatformPorts
  /** Start from empty state (tests) instead of keeping the last run's (dev). */
  fresh: boolean
  /** Echo component logs to this stream, prefixed by name. */
  echo?: NodeJS.WritableStream
  /** The dev allowance: input URLs on loopback may be fetched. */
  allowLoopbackUrls: boolean
  /** Accept test-only request headers at the gateway. */
  testHooks: boolean
  syncWaitSeconds?: number
  /** Tests only: multiplies the operator's callback back-off (DUTIL_CALLBACK_DELAY_SCALE). */
  callbackDelayScale?: number
  progress?: (message: string) => void
  /** Extra settings of the gateway and operator (the tests' OpenID provider). */
  gatewayEnv?: Record<string, string>
  /** Supervisor to start processes under; pass one to be able to stop them while starting. */
  supervisor?: Supervisor
  /**
   * The real-node tier (test/real-node): an address on this machine that pods reach. The API
   * server, Redis, PostgreSQL and MinIO listen there too (the API server and MinIO only there),
   * and the API server advertises it for the `kubernetes` Service.
   */
  nodeAddress?: string
  /** The real node's pod addresses (PostgreSQL lets them connect). */
  podCidr?: string
  /** Start the dev node agent (default); the real-node tier runs pods on a kubelet instead. */
  nodeAgent?: boolean
  /** Start the operator and gateway as host processes (default); the real-node tier installs the chart instead. */
  programs?: boolean
  /** Run Jaeger and trace every job of the host programs into it (docs/observability.md). */
  tracing?: boolean
}

export interface Platform {
  dir: string
  kubeconfigPath: string
  gatewayUrl: string
  storage: { endpoint: string; accessKey: string; secretKey: string; bucket: string; region: string }
  redisUrl: string
  /** The job record (PostgreSQL). */
  databaseUrl: string
  /** Jaeger's query API and UI, when the programs run here with tracing on. */
  tracesUrl?: string
  supervisor: Supervisor
  /** Env of the gateway and operator, to restart one of them in a test. */
  programEnv: NodeJS.ProcessEnv
  startOperator(): void
  startGateway(): void
  stop(): Promise<void>
  /**
   * Synchronous last resort (the test process exiting without its teardown): SIGKILL every
   * component's process group at once, so none outlives the run and holds its ports.
   */
  killNow(): void
}

export function reportUnexpectedExit(dir: string) {
  return (name: string, code: number | null, restartInMs?: number) =>
    process.stderr.write(
      `[platform] ${name} exited unexpectedly (code ${code})${restartInMs === undefined ? '' : `; restarting it in ${(restartInMs / 1000).toFixed(0)} s`}; see ${join(dir, 'logs', `${name}.log`)}\n`,
    )
}

/**
 * What a cluster with a real node needs besides: taints lifted once the kubelet reports Ready,
 * Service endpoints for kube-proxy, and ResourceQuota usage (the chart's runner quota). (The node
 * agent's tier runs without them.)
 */
const REAL_NODE_CONTROLLERS =
  'node-lifecycle-controller,endpoints-controller,endpointslice-controller,resourcequota-controller,' +
  // A trial install's internal services: StatefulSets whose claims bind to volumes the tests make.
  'statefulset-controller,persistentvolume-binder-controller,persistentvolumeclaim-protection-controller,persistentvolume-protection-controller'

function bin(name: string): string {
  const p = join(BIN_DIR, name)
  if (!existsSync(p)) throw new Error(`${p} is missing: run test/platform/build-binaries.sh (make binaries) first`)
  return p
}

function kubeconfigYaml(dir: string, host: string, port: number): string {
  const pki = join(dir, 'pki')
  return `apiVersion: v1
kind: Config
clusters:
- name: dutil-local
  cluster:
    server: https://${host}:${port}
    certificate-authority: ${join(pki, 'ca.crt')}
users:
- name: dutil-admin
  user:
    client-certificate: ${join(pki, 'admin.crt')}
    client-key: ${join(pki, 'admin.key')}
contexts:
- name: dutil-local
  context:
    cluster: dutil-local
    user: dutil-admin
    namespace: ${NAMESPACE}
current-context: dutil-local
`
}

function getStatus(url: string, tls?: { ca: Buffer; cert: Buffer; key: Buffer }): Promise<number> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http
    const req = mod.get(url, { ...(tls ?? {}), timeout: 2000 }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.on('timeout', () => req.destroy(new Error('timeout')))
  })
}

function storageCredentials(dir: string): { accessKey: string; secretKey: string } {
  const file = join(dir, 'minio-credentials.json')
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'))
  const creds = { accessKey: 'dutil-local', secretKey: randomBytes(18).toString('hex') }
  writeFileSync(file, JSON.stringify(creds), { mode: 0o600 })
  return creds
}

/** Applies crds/ with kubectl (server-side), as an installer would, and waits until they serve. */
async function applyCrds(kubeconfigPath: string): Promise<void> {
  const kubectl = (...args: string[]) =>
    execFileSync(bin('kubectl'), ['--kubeconfig', kubeconfigPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  await until(
    'CRDs applied',
    async () => kubectl('apply', '--server-side', '--force-conflicts', '-f', join(REPO_ROOT, 'crds')) && true,
    30_000,
    500,
  )
  kubectl('wait', '--for=condition=Established', '--timeout=60s', '-f', join(REPO_ROOT, 'crds'))
}

/** Whether the operator's leader wrote its sealed inputs entry in the signing Secret. */
async function operatorTakesSealedInputs(kc: KubeConfig): Promise<boolean> {
  const core = kc.makeApiClient(CoreV1Api)
  try {
    const secret = await core.readNamespacedSecret({ name: SECRET_OBJECTS.signing, namespace: NAMESPACE })
    return Boolean(secret.data?.[SEALED_INPUTS_ENTRY])
  } catch {
    return false
  }
}

async function ensureNamespaceAndSecret(
  kc: KubeConfig,
  creds: { accessKey: string; secretKey: string },
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api)
  try {
    await core.createNamespace({ body: { metadata: { name: NAMESPACE } } })
  } catch (err) {
    if (apiStatus(err) !== 409) throw err
  }
  const body = { metadata: { name: 'dutil-storage', namespace: NAMESPACE }, stringData: creds }
  try {
    await core.createNamespacedSecret({ namespace: NAMESPACE, body })
  } catch (err) {
    if (apiStatus(err) !== 409) throw err
    await core.replaceNamespacedSecret({ name: 'dutil-storage', namespace: NAMESPACE, body })
  }
  // Pods need the namespace's default ServiceAccount (made by the serviceaccount controller).
  await until(
    'default service account',
    async () => (await core.readNamespacedServiceAccount({ name: 'default', namespace: NAMESPACE })) !== undefined,
  )
}

/**
 * Starts the whole local platform: etcd, kube-apiserver, kube-controller-manager and
 * kube-scheduler (real binaries built from the Go module proxy), Redis, PostgreSQL, MinIO, the dev node
 * agent standing in for kubelet, then dutil's operator and gateway.
 */
export async function startPlatform(opts: PlatformOptions): Promise<Platform> {
  const say = opts.progress ?? (() => {})
  const dir = resolve(opts.dir)
  const p = opts.ports
  if (opts.fresh) rmSync(dir, { recursive: true, force: true })
  mkdirSync(join(dir, 'logs'), { recursive: true })
  const supervisor = opts.supervisor ?? new Supervisor(reportUnexpectedExit(dir))
  const log = (name: string) => join(dir, 'logs', `${name}.log`)
  mkdirSync(join(dir, 'pids'), { recursive: true })
  mkdirSync(join(dir, 'node-agent-home'), { recursive: true })
  const start = (name: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}) => {
    writeFileSync(join(dir, 'pids', `${name}.json`), JSON.stringify({ command, args, env }), { mode: 0o600 })
    // Tests find a component's process here (to kill one and check what survives), and how to
    // start it again; a restart by the supervisor (make dev) writes its new pid.
    const onStart = (child: ChildProcess) => {
      if (child.pid) writePidFile(dir, name, child.pid)
    }
    return supervisor.start({ name, command, args, env, cwd: REPO_ROOT, logFile: log(name), echo: opts.echo, onStart })
  }

  /** Every component still running by its pid file (one long gone names no process: see pid-files.ts). */
  const killByPidFiles = () => {
    for (const f of readdirSync(join(dir, 'pids')).filter((n) => n.endsWith('.pid')))
      signalComponentGroup(dir, f.slice(0, -'.pid'.length), 'SIGKILL')
  }

  // Where the API server and MinIO listen: loopback, or only the node's address (pods reach it).
  const host = opts.nodeAddress ?? '127.0.0.1'
  const alsoOnNode = opts.nodeAddress ? [opts.nodeAddress] : []
  try {
    execFileSync(join(REPO_ROOT, 'test', 'platform', 'certs.sh'), [join(dir, 'pki'), ...alsoOnNode], {
      stdio: 'inherit',
    })
    const pki = (f: string) => join(dir, 'pki', f)
    const kubeconfigPath = join(dir, 'kubeconfig')
    writeFileSync(kubeconfigPath, kubeconfigYaml(dir, host, p.apiserver), { mode: 0o600 })
    const creds = storageCredentials(dir)

    say('starting etcd, Redis, PostgreSQL and MinIO')
    start('etcd', bin('etcd'), [
      '--name=dutil',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${p.etcd}`,
      `--advertise-client-urls=http://127.0.0.1:${p.etcd}`,
      `--listen-peer-urls=http://127.0.0.1:${p.etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${p.etcdPeer}`,
      `--initial-cluster=dutil=http://127.0.0.1:${p.etcdPeer}`,
      '--log-level=warn',
      '--quota-backend-bytes=4294967296',
    ])
    mkdirSync(join(dir, 'redis'), { recursive: true })
    start('redis', 'redis-server', [
      '--port',
      String(p.redis),
      '--bind',
      ['127.0.0.1', ...alsoOnNode].join(' '),
      // Pods connect from the real node's pod network (protected mode would refuse them).
      ...(opts.nodeAddress ? ['--protected-mode', 'no'] : []),
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      join(dir, 'redis'),
    ])
    const postgres = preparePostgres(dir, p.postgres, {
      durable: !opts.fresh,
      nodeAddress: opts.nodeAddress,
      podCidr: opts.podCidr,
    })
    start('postgres', postgres.command[0], postgres.command.slice(1))
    start(
      'minio',
      bin('minio'),
      [
        'server',
        join(dir, 'minio'),
        '--address',
        `${host}:${p.minio}`,
        '--console-address',
        `127.0.0.1:${p.minioConsole}`,
        '--quiet',
      ],
      {
        MINIO_ROOT_USER: creds.accessKey,
        MINIO_ROOT_PASSWORD: creds.secretKey,
        MINIO_BROWSER: 'off',
        MINIO_UPDATE: 'off',
      },
    )
    await until('etcd', async () => (await getStatus(`http://127.0.0.1:${p.etcd}/health`)) === 200)
    await ensureDatabase(postgres)

    say('starting kube-apiserver')
    start('kube-apiserver', bin('kube-apiserver'), [
      `--etcd-servers=http://127.0.0.1:${p.etcd}`,
      '--etcd-prefix=/registry',
      `--bind-address=${host}`,
      `--advertise-address=${host}`,
      `--secure-port=${p.apiserver}`,
      `--cert-dir=${join(dir, 'pki')}`,
      `--tls-cert-file=${pki('apiserver.crt')}`,
      `--tls-private-key-file=${pki('apiserver.key')}`,
      `--client-ca-file=${pki('ca.crt')}`,
      // Logs, exec and attach on a real node: the kubelet accepts clients of this CA.
      `--kubelet-client-certificate=${pki('admin.crt')}`,
      `--kubelet-client-key=${pki('admin.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki('sa.pub')}`,
      `--service-account-signing-key-file=${pki('sa.key')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--authorization-mode=Node,RBAC',
      '--allow-privileged=true',
      // A loopback advertise address is refused by the endpoint reconciler; no Service needs it
      // there. On the real node, pods reach the API server through the `kubernetes` Service.
      ...(opts.nodeAddress ? [] : ['--endpoint-reconciler-type=none']),
      // A real node (make real-node) is reached at its InternalIP for logs and exec; no DNS knows its name.
      '--kubelet-preferred-address-types=InternalIP,Hostname',
      '--profiling=false',
      '--event-ttl=1h',
      '--v=1',
    ])
    const tls = {
      ca: readFileSync(pki('ca.crt')),
      cert: readFileSync(pki('admin.crt')),
      key: readFileSync(pki('admin.key')),
    }
    await until(
      'kube-apiserver ready',
      async () => (await getStatus(`https://${host}:${p.apiserver}/readyz`, tls)) === 200,
      120_000,
      300,
    )

    say('starting kube-controller-manager and kube-scheduler')
    start('kube-controller-manager', bin('kube-controller-manager'), [
      `--kubeconfig=${kubeconfigPath}`,
      `--authentication-kubeconfig=${kubeconfigPath}`,
      `--authorization-kubeconfig=${kubeconfigPath}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${p.controllerManager}`,
      `--cert-dir=${join(dir, 'pki', 'kcm')}`,
      // Deployments and ReplicaSets: the Helm chart's test install runs the gateway and operator as real pods.
      `--controllers=job-controller,garbage-collector-controller,pod-garbage-collector-controller,ttl-after-finished-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller,deployment-controller,replicaset-controller,disruption-controller${opts.nodeAddress ? `,${REAL_NODE_CONTROLLERS}` : ''}`,
      `--service-account-private-key-file=${pki('sa.key')}`,
      `--root-ca-file=${pki('ca.crt')}`,
      '--use-service-account-credentials=false',
      '--concurrent-job-syncs=10',
      '--v=1',
      // Benches that measure the control plane's own limits (docs/operations.md) set more here.
      ...(process.env.DUTIL_TEST_KCM_FLAGS?.split(/\s+/).filter(Boolean) ?? []),
    ])
    start('kube-scheduler', bin('kube-scheduler'), [
      `--kubeconfig=${kubeconfigPath}`,
      `--authentication-kubeconfig=${kubeconfigPath}`,
      `--authorization-kubeconfig=${kubeconfigPath}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${p.scheduler}`,
      `--cert-dir=${join(dir, 'pki', 'scheduler')}`,
      '--v=1',
    ])

    const kc = new KubeConfig()
    kc.loadFromFile(kubeconfigPath)
    say('installing CRDs, namespace and storage bucket')
    await applyCrds(kubeconfigPath)
    await ensureNamespaceAndSecret(kc, creds)
    // Keys without a signing secret of their own sign callbacks with the workspace secret.
    await new ApiKeyAdmin(kc, NAMESPACE).ensureWorkspaceSecret()
    await until('redis', () => tcpOpen(p.redis))
    const storage = { endpoint: `http://${host}:${p.minio}`, region: 'us-east-1', bucket: BUCKET, ...creds }
    const s3 = storageClient(storage)
    await until('minio', async () => {
      if (!(await s3.bucketExists(BUCKET))) await s3.makeBucket(BUCKET, storage.region)
      return true
    })

    if (opts.nodeAgent !== false) say('starting the node agent')
    if (opts.nodeAgent !== false)
      start(
        'node-agent',
        process.execPath,
        [
          join(REPO_ROOT, 'dist', 'test', 'node-agent', 'main.js'),
          `--kubeconfig=${kubeconfigPath}`,
          '--node-name=dutil-local-node',
          `--work-dir=${join(dir, 'node')}`,
          `--image-root=${REPO_ROOT}`,
          // The images this checkout stands in for: the operator's (tag dev) and the chart test's (tag
          // test). Any other image is missing here, and its pods wait in ErrImagePull.
          '--images=dutil.local/*:dev,dutil.local/*:test',
        ],
        {
          // Pods get nothing of the agent's environment but PATH and locale (pod-env.ts); the
          // agent's own home is the platform's, never the user's, so nothing can leak from there.
          KUBECONFIG: '',
          HOME: join(dir, 'node-agent-home'),
          XDG_CONFIG_HOME: join(dir, 'node-agent-home', '.config'),
        },
      )

    // The programs run here trace every job into Jaeger (docs/observability.md).
    const tracing = opts.tracing === true && opts.programs !== false
    if (tracing) {
      writeFileSync(join(dir, 'jaeger.yaml'), jaegerConfig(p))
      start('jaeger', bin('jaeger'), ['--config', `file:${join(dir, 'jaeger.yaml')}`])
      await until('jaeger', async () => (await getStatus(`http://127.0.0.1:${p.jaegerHealth}/status`)) === 200)
    }

    const redisUrl = `redis://127.0.0.1:${p.redis}`
    const programEnv: NodeJS.ProcessEnv = {
      KUBECONFIG: kubeconfigPath,
      DUTIL_NAMESPACE: NAMESPACE,
      DUTIL_S3_ENDPOINT: storage.endpoint,
      // Download links go through the gateway's files host, as a chart with files.enabled has it.
      DUTIL_FILES_PORT: String(p.files),
      DUTIL_S3_PUBLIC_ENDPOINT: `http://127.0.0.1:${p.files}`,
      DUTIL_S3_REGION: storage.region,
      DUTIL_S3_BUCKET: BUCKET,
      DUTIL_S3_ACCESS_KEY: creds.accessKey,
      DUTIL_S3_SECRET_KEY: creds.secretKey,
      DUTIL_ALLOW_LOOPBACK_URLS: String(opts.allowLoopbackUrls),
      DUTIL_IMAGE_REGISTRY: 'dutil.local',
      DUTIL_IMAGE_TAG: 'dev',
      DUTIL_REDIS_URL: redisUrl,
      DUTIL_DATABASE_URL: postgres.url,
      DUTIL_PORT: String(p.gateway),
      DUTIL_OPERATOR_PORT: String(p.operator),
      DUTIL_TEST_HOOKS: String(opts.testHooks),
      // Gotenberg's routes for its clients (off by default in the chart).
      DUTIL_GOTENBERG_ROUTES: 'true',
      // The local platform is plain http on loopback: console cookies cannot be Secure here.
      DUTIL_CONSOLE_INSECURE_COOKIES: 'true',
      DUTIL_PUBLIC_URL: `http://127.0.0.1:${p.gateway}`,
      ...(tracing ? { DUTIL_TRACING_ENDPOINT: `http://127.0.0.1:${p.jaegerOtlp}` } : {}),
      ...(opts.gatewayEnv ?? {}),
      ...(opts.syncWaitSeconds ? { DUTIL_SYNC_WAIT_SECONDS: String(opts.syncWaitSeconds) } : {}),
      ...(opts.callbackDelayScale ? { DUTIL_CALLBACK_DELAY_SCALE: String(opts.callbackDelayScale) } : {}),
      // Extra trust (a test CA for callback receivers) also reaches programs restarted by a test.
      ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
    }
    // DUTIL_OPERATOR_CPU_PROF=<dir>: the operator runs under --cpu-prof (benchmarks profile it).
    const profile = process.env.DUTIL_OPERATOR_CPU_PROF
    const operatorFlags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []
    const startOperator = () =>
      void start(
        'operator',
        process.execPath,
        [...operatorFlags, join(REPO_ROOT, 'dist', 'operator', 'main.js')],
        programEnv,
      )
    const startGateway = () =>
      void start('gateway', process.execPath, [join(REPO_ROOT, 'dist', 'gateway', 'main.js')], programEnv)
    if (opts.programs !== false) {
      say('starting the operator and the gateway')
      startOperator()
      startGateway()
      await until(
        'operator ready',
        async () => (await getStatus(`http://127.0.0.1:${p.operator}/readyz`)) === 200,
        60_000,
      )
      await until(
        'gateway ready',
        async () => (await getStatus(`http://127.0.0.1:${p.gateway}/readyz`)) === 200,
        60_000,
      )
      // The operator's leader says it runs jobs whose input rides with them (docs/adr/0043);
      // until then the gateway stores every input. Tests start on the platform as it runs.
      await until('operator leading', () => operatorTakesSealedInputs(kc), 60_000)
    }

    return {
      dir,
      kubeconfigPath,
      gatewayUrl: `http://127.0.0.1:${p.gateway}`,
      storage,
      redisUrl,
      databaseUrl: postgres.url,
      ...(tracing ? { tracesUrl: `http://127.0.0.1:${p.jaegerQuery}` } : {}),
      supervisor,
      programEnv,
      startOperator,
      startGateway,
      stop: async () => {
        await supervisor.stopAll()
        // Components a test restarted itself are not the supervisor's: stop them by pid file.
        killByPidFiles()
      },
      killNow: () => {
        supervisor.killAllNow()
        killByPidFiles()
      },
    }
  } catch (err) {
    await supervisor.stopAll(3000)
    throw err
  }
}
