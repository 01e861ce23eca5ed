import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node'
import { BIN_DIR, REPO_ROOT } from '../platform/platform.js'
import type { Supervisor } from '../platform/supervisor.js'
import { until } from '../platform/wait-for.js'
import { clusterDnsManifest } from './cluster-addons.js'
import {
  cniConflist,
  containerdConfig,
  kubeletConfig,
  kubeletKubeconfig,
  kubeProxyConfig,
  paths,
  type RealNodeLayout,
} from './node-config.js'

export const SANDBOX_IMAGE = 'dutil.local/pause:3.10'
/** The platform's --service-cluster-ip-range, and the cluster DNS Service's address in it. */
const SERVICE_CIDR = '10.0.0.0/24'
const CLUSTER_DNS_IP = '10.0.0.10'
export const POD_CIDR = '10.244.0.0/24'
const BE_LIBERAL = 'net.netfilter.nf_conntrack_tcp_be_liberal'
/** A closed port on loopback (discard): where image pulls go, and fail. */
const NO_REGISTRY_PROXY = 'http://127.0.0.1:9'

/** Why this host cannot run a real node (the test summary prints it); null when it can. */
export function realNodeBlocker(): string | null {
  if (process.getuid?.() !== 0) return 'the real node needs root (containerd, runc, cgroups, network namespaces)'
  for (const tool of ['containerd', 'runc', 'ctr', 'iptables', 'ipset']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' })
    } catch {
      return `${tool} is not installed (test/platform/install-deps.sh --node installs it from Debian)`
    }
  }
  if (!existsSync(join(CNI_BIN_DIR, 'bridge')))
    return `no CNI plugins in ${CNI_BIN_DIR} (Debian's containernetworking-plugins)`
  for (const b of ['kubelet', 'kube-proxy', 'kube-router', 'coredns']) {
    if (!existsSync(join(BIN_DIR, b))) return `${join(BIN_DIR, b)} is missing (test/platform/build-binaries.sh ${b})`
  }
  return null
}

const CNI_BIN_DIR = '/usr/lib/cni'

/** The node's address, on an interface of its own (NODE_INTERFACE) that the start script makes on this machine. */
export const NODE_IP = '10.250.0.1'
const NODE_INTERFACE = 'dutil-node0'

/** Makes the interface that holds the node's address (kept between runs; idempotent). */
export function ensureNodeAddress(ip: string): void {
  const sh = (cmd: string) => execFileSync('sh', ['-c', cmd], { stdio: 'ignore' })
  try {
    sh(`ip link show ${NODE_INTERFACE}`)
  } catch {
    // A bridge without ports: this kernel may lack the dummy driver.
    sh(`ip link add ${NODE_INTERFACE} type bridge`)
  }
  try {
    sh(`ip addr add ${ip}/32 dev ${NODE_INTERFACE}`)
  } catch {
    // Already there.
  }
  sh(`ip link set ${NODE_INTERFACE} up`)
}

/**
 * Routes the cluster's own ranges (Service ClusterIPs, pod addresses) to the node's interface,
 * below any route the node's network makes (metric 4000), so that traffic from this machine to
 * a ClusterIP before kube-proxy has written its rule, or to a pod address before the pod bridge
 * exists, is dropped here instead of following the default route off the machine (where some
 * other host could answer it). kube-proxy's DNAT re-routes a ClusterIP packet to its pod; the
 * pod bridge's own subnet route wins over this one. Kept between runs; idempotent.
 */
export function keepClusterRangesLocal(layout: Pick<RealNodeLayout, 'serviceCidr' | 'podCidr'>): void {
  for (const cidr of [layout.serviceCidr, layout.podCidr])
    execFileSync('ip', ['route', 'replace', cidr, 'dev', NODE_INTERFACE, 'metric', '4000'], { stdio: 'ignore' })
}

export function hostCgroupVersion(): 1 | 2 {
  return execFileSync('stat', ['-fc', '%T', '/sys/fs/cgroup'], { encoding: 'utf8' }).trim() === 'cgroup2fs' ? 2 : 1
}

export interface RealNodeOptions {
  /** The platform's state dir (its pki/ holds the CA that signs the node's certificate). */
  platformDir: string
  server: string
  adminKubeconfig: string
  supervisor: Supervisor
  progress?: (m: string) => void
  /**
   * kube-proxy, kube-router and CoreDNS too (default). Without them: only containerd and the
   * kubelet (`make real-node` beside `make dev`, whose API server pods cannot reach).
   */
  addOns?: boolean
}

/** Where the node of a platform lives and which addresses and ports it uses. */
export function realNodeLayout(platformDir: string, server: string): RealNodeLayout {
  return {
    dir: join(platformDir, 'real-node'),
    imageStore: join(dirname(BIN_DIR), 'real-node', 'containerd'),
    nodeName: 'dutil-real-node',
    server,
    nodeIp: NODE_IP,
    caFile: join(platformDir, 'pki', 'ca.crt'),
    kubeletPort: 20250,
    healthzPort: 20248,
    podCidr: POD_CIDR,
    cgroupVersion: hostCgroupVersion(),
    cniBinDir: CNI_BIN_DIR,
    sandboxImage: SANDBOX_IMAGE,
    serviceCidr: SERVICE_CIDR,
    clusterDns: CLUSTER_DNS_IP,
    proxyMetricsPort: 20249,
    proxyHealthzPort: 20256,
  }
}

/**
 * A real node joined to the local control plane: Debian's containerd and runc, the kubelet of
 * the control plane's release, a bridge CNI network, and the sandbox image built here;
 * kube-proxy, kube-router's NetworkPolicy firewall and CoreDNS. Resolves once the Node is Ready
 * and cluster DNS answers. On failure, stopRealNode(layout) cleans up what was started.
 */
export async function startRealNode(layout: RealNodeLayout, o: RealNodeOptions): Promise<void> {
  const say = o.progress ?? (() => {})
  const dir = layout.dir
  const p = paths(layout)
  ensureNodeAddress(layout.nodeIp)
  keepClusterRangesLocal(layout)
  for (const d of [p.containerdRoot, p.containerdState, p.cniConfDir, p.kubeletRoot, p.podLogs])
    mkdirSync(d, { recursive: true })
  writeFileSync(p.containerdConfig, containerdConfig(layout))
  writeFileSync(join(p.cniConfDir, '10-dutil.conflist'), cniConflist(layout))
  writeFileSync(p.kubeletConfig, kubeletConfig(layout))
  mkdirSync(dirname(p.chromiumSeccompProfile), { recursive: true })
  copyFileSync(join(REPO_ROOT, 'charts', 'dutil', 'files', 'chromium-sandbox-seccomp.json'), p.chromiumSeccompProfile)
  // The node's own identity (Node authorizer): system:node:<name> in system:nodes.
  const pki = join(o.platformDir, 'pki')
  const node = issueClientCert(pki, join(dir, 'kubelet', 'node'), `/O=system:nodes/CN=system:node:${layout.nodeName}`)
  writeFileSync(p.kubeletKubeconfig, kubeletKubeconfig(layout, node.cert, node.key), { mode: 0o600 })
  // kube-proxy as the user the built-in system:node-proxier binding names.
  mkdirSync(dirname(p.kubeProxyConfig), { recursive: true })
  const proxy = issueClientCert(pki, join(dirname(p.kubeProxyConfig), 'kube-proxy'), '/CN=system:kube-proxy')
  writeFileSync(p.kubeProxyKubeconfig, kubeletKubeconfig(layout, proxy.cert, proxy.key), { mode: 0o600 })
  writeFileSync(p.kubeProxyConfig, kubeProxyConfig(layout))

  say('starting containerd')
  const containerdLog = join(o.platformDir, 'logs', 'containerd.log')
  const startContainerd = async () => {
    const logFrom = existsSync(containerdLog) ? statSync(containerdLog).size : 0
    o.supervisor.start({
      name: 'containerd',
      command: 'containerd',
      args: ['--config', p.containerdConfig],
      // Nothing is pulled from off this machine: a pull of a missing image goes to a closed port on
      // loopback and fails there (ErrImagePull), never resolving or reaching a registry elsewhere.
      // Only a registry on the node's own address (one a test runs) is reached.
      env: {
        HTTP_PROXY: NO_REGISTRY_PROXY,
        HTTPS_PROXY: NO_REGISTRY_PROXY,
        NO_PROXY: NODE_IP,
        http_proxy: NO_REGISTRY_PROXY,
        https_proxy: NO_REGISTRY_PROXY,
        no_proxy: NODE_IP,
      },
      logFile: containerdLog,
    })
    // Its CRI answers "not initialized yet" until it has recovered its state and started its
    // streaming server (the last step before it serves; a warm image store takes longer).
    await until(
      'containerd CRI ready',
      async () =>
        existsSync(p.containerdSocket) &&
        readFileSync(containerdLog).subarray(logFrom).includes('Start streaming server'),
      60_000,
      100,
    )
  }
  await startContainerd()
  const ctr = nodeCtr(p.containerdSocket)
  const stale = removeAllContainers(ctr)
  if (stale > 0) {
    // The CRI plugin recovered those sandboxes when it started: start afresh, with none to recover.
    say(`removed ${stale} containers an earlier run left in the image store; restarting containerd`)
    await o.supervisor.stopOne('containerd')
    await startContainerd()
  }
  if (!imagesIn(ctr).has(SANDBOX_IMAGE)) {
    say('building and importing the sandbox image')
    const tar = execFileSync(join(REPO_ROOT, 'test', 'real-node', 'pause-image.sh'), [join(dir, 'pause.tar')], {
      encoding: 'utf8',
    }).trim()
    ctr('images', 'import', '--index-name', SANDBOX_IMAGE, tar)
  }

  say('starting the kubelet')
  o.supervisor.start({
    name: 'kubelet',
    command: join(BIN_DIR, 'kubelet'),
    args: [
      `--config=${p.kubeletConfig}`,
      `--kubeconfig=${p.kubeletKubeconfig}`,
      `--root-dir=${p.kubeletRoot}`,
      `--hostname-override=${layout.nodeName}`,
      `--node-ip=${layout.nodeIp}`,
      '--v=1',
    ],
    logFile: join(o.platformDir, 'logs', 'kubelet.log'),
  })
  const kc = new KubeConfig()
  kc.loadFromFile(o.adminKubeconfig)
  const core = kc.makeApiClient(CoreV1Api)
  await until(
    `node ${layout.nodeName} Ready`,
    async () =>
      (await core.readNode({ name: layout.nodeName }).catch(() => undefined))?.status?.conditions?.some(
        (c) => c.type === 'Ready' && c.status === 'True',
      ),
    120_000,
    500,
  )

  if (o.addOns === false) return
  say('starting kube-proxy and the NetworkPolicy enforcer (kube-router)')
  // kube-proxy sets nf_conntrack_tcp_be_liberal (tcpBeLiberal): the machine's value comes back at teardown.
  if (!existsSync(p.sysctlsBefore))
    writeFileSync(
      p.sysctlsBefore,
      JSON.stringify({ [BE_LIBERAL]: readFileSync(`/proc/sys/${BE_LIBERAL.replace(/\./g, '/')}`, 'utf8').trim() }),
    )
  const logFile = (name: string) => join(o.platformDir, 'logs', `${name}.log`)
  o.supervisor.start({
    name: 'kube-proxy',
    command: join(BIN_DIR, 'kube-proxy'),
    args: [`--config=${p.kubeProxyConfig}`, '--v=1'],
    logFile: logFile('kube-proxy'),
  })
  o.supervisor.start({
    name: 'kube-router',
    command: join(BIN_DIR, 'kube-router'),
    args: kubeRouterArgs(layout, o.adminKubeconfig),
    logFile: logFile('kube-router'),
  })
  // Pods on the bridge reach each other and Services through FORWARD: accepted after the
  // enforcer's chains (it inserts itself first), whatever a host firewall's policy is.
  for (const rule of forwardRules(layout)) if (!iptables('-C', ...rule)) iptables('-A', ...rule)

  say('starting cluster DNS (CoreDNS)')
  // Tagged with the version build-binaries.sh stamped: the image store outlives the run.
  const corednsImage = `dutil.local/coredns:${readFileSync(join(BIN_DIR, '.coredns.version'), 'utf8').trim().replace(/^.*@/, '')}`
  if (!imagesIn(ctr).has(corednsImage)) {
    const tar = execFileSync(
      join(REPO_ROOT, 'test', 'real-node', 'static-image.sh'),
      [join(dir, 'coredns.tar'), join(BIN_DIR, 'coredns')],
      { encoding: 'utf8' },
    ).trim()
    ctr('images', 'import', '--index-name', corednsImage, tar)
  }
  execFileSync(join(BIN_DIR, 'kubectl'), ['--kubeconfig', o.adminKubeconfig, 'apply', '--server-side', '-f', '-'], {
    input: clusterDnsManifest({ image: corednsImage, clusterIp: layout.clusterDns }),
    stdio: ['pipe', 'ignore', 'inherit'],
  })
  const apps = kc.makeApiClient(AppsV1Api)
  await until(
    'CoreDNS ready',
    async () =>
      ((await apps.readNamespacedDeployment({ name: 'coredns', namespace: 'kube-system' })).status?.readyReplicas ??
        0) > 0,
    120_000,
    500,
  )
}

/** kube-router with only its NetworkPolicy controller on (no routing, no service proxy: kube-proxy does that). */
function kubeRouterArgs(l: RealNodeLayout, kubeconfig: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--hostname-override=${l.nodeName}`,
    '--run-firewall=true',
    '--run-router=false',
    '--run-service-proxy=false',
    `--service-cluster-ip-range=${l.serviceCidr}`,
    '--health-port=0',
    '--metrics-port=0',
    '--enable-pod-egress=false',
    '--v=1',
  ]
}

function forwardRules(l: RealNodeLayout): string[][] {
  const comment = ['-m', 'comment', '--comment', 'dutil real node']
  return [
    ['FORWARD', '-s', l.podCidr, ...comment, '-j', 'ACCEPT'],
    ['FORWARD', '-d', l.podCidr, ...comment, '-j', 'ACCEPT'],
  ]
}

function iptables(...args: string[]): boolean {
  try {
    execFileSync('iptables', ['-w', ...args], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** A client certificate signed by the platform CA (PREFIX.crt, PREFIX.key). */
function issueClientCert(pki: string, prefix: string, subject: string): { cert: string; key: string } {
  execFileSync('bash', [
    '-c',
    `openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null && printf 'extendedKeyUsage=clientAuth\\nkeyUsage=digitalSignature,keyEncipherment\\n' > "$1.ext" && openssl x509 -req -in "$1.csr" -CA "$3/ca.crt" -CAkey "$3/ca.key" -CAcreateserial -days 30 -extfile "$1.ext" -out "$1.crt" 2>/dev/null && rm -f "$1.csr" "$1.ext"`,
    '_',
    prefix,
    subject,
    pki,
  ])
  return { cert: `${prefix}.crt`, key: `${prefix}.key` }
}

/**
 * Stops the node and leaves this machine as it was: the kubelet first (so nothing restarts),
 * every container, containerd and its shims, then the mounts, network namespaces, iptables
 * chains and ipsets the node made. Safe to call when the node never started.
 */
export async function stopRealNode(layout: RealNodeLayout, supervisor: Supervisor): Promise<void> {
  const p = paths(layout)
  await supervisor.stopOne('kubelet').catch(() => {})
  if (existsSync(p.containerdSocket)) {
    try {
      // Every container killed and deleted: only images stay in the store (the next start
      // clears what is left here too).
      removeAllContainers(nodeCtr(p.containerdSocket, 30_000))
    } catch {
      // containerd is not answering: the shims are killed below.
    }
  }
  await supervisor.stopOne('kube-router').catch(() => {})
  await supervisor.stopOne('kube-proxy').catch(() => {})
  await supervisor.stopOne('containerd').catch(() => {})
  const sh = (cmd: string) => {
    try {
      execFileSync('sh', ['-c', cmd], { stdio: 'ignore', timeout: 60_000 })
    } catch {
      // Best effort: the next step still runs.
    }
  }
  // Shims outlive containerd by design; ours name our socket. (pkill run directly: through a
  // shell, the pattern in the shell's own command line matched and killed it.)
  try {
    execFileSync('pkill', ['-9', '-f', `containerd-shim.*${p.containerdSocket}`], { stdio: 'ignore', timeout: 60_000 })
  } catch {
    // None left (pkill exits 1 when nothing matched).
  }
  // Mounts under the node's directory (secrets, overlays), deepest first; then pod network namespaces.
  sh(`grep -o ' ${layout.dir}[^ ]*' /proc/self/mounts | sort -r | xargs -r -n1 umount -l`)
  sh('for ns in /run/netns/cni-*; do [ -e "$ns" ] && ip netns delete "$(basename "$ns")"; done')
  for (const rule of forwardRules(layout)) while (iptables('-D', ...rule));
  sh(`${join(BIN_DIR, 'kube-proxy')} --cleanup --v=0`)
  sh(`${join(BIN_DIR, 'kube-router')} --cleanup-config`)
  // The kubelet's own chains (KUBE-FIREWALL and its canaries).
  for (const table of ['filter', 'nat', 'mangle']) {
    for (const chain of ['INPUT', 'OUTPUT']) while (iptables('-t', table, '-D', chain, '-j', 'KUBE-FIREWALL'));
    for (const chain of ['KUBE-FIREWALL', 'KUBE-KUBELET-CANARY', 'KUBE-IPTABLES-HINT'])
      if (iptables('-t', table, '-F', chain)) iptables('-t', table, '-X', chain)
  }
  sh('rm -rf /var/lib/cni/networks/dutil-pods')
  if (existsSync(p.sysctlsBefore)) {
    for (const [key, value] of Object.entries(
      JSON.parse(readFileSync(p.sysctlsBefore, 'utf8')) as Record<string, string>,
    ))
      sh(`sysctl -qw ${key}=${value}`)
    rmSync(p.sysctlsBefore, { force: true })
  }
  sh('ip link delete dutil-cni0')
}

/** ctr against the node's containerd (its socket: paths(layout).containerdSocket), in the kubelet's namespace. */
export function nodeCtr(socket: string, timeoutMs = 60_000): (...args: string[]) => string {
  return (...args) =>
    execFileSync('ctr', ['--address', socket, '-n', 'k8s.io', ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    })
}

/** The image names in the node's store. */
function imagesIn(ctr: (...args: string[]) => string): Set<string> {
  return new Set(ctr('images', 'ls', '-q').split('\n').filter(Boolean))
}

/**
 * Deletes every container (pod sandboxes included) and its task, killed first (`tasks delete
 * --force`), from the node's containerd, keeping the images. The image store outlives the run, and so would the containers recorded in
 * it: a kubelet started on a store with the last run's sandboxes spends its first minutes
 * removing them, and new pods' sandboxes wait behind that (seen: RemovePodSandbox timing out
 * after 2 min while test pods stayed ContainerCreating). Returns how many it deleted.
 */
export function removeAllContainers(ctr: (...args: string[]) => string): number {
  const ids = ctr('containers', 'ls', '-q').split('\n').filter(Boolean)
  for (const id of ids) {
    try {
      ctr('tasks', 'delete', '--force', id)
    } catch {
      // No task (a container from an earlier run has none).
    }
    try {
      ctr('containers', 'delete', id)
    } catch {
      // Gone already.
    }
  }
  return ids.length
}

/** How large the transfer registry's storage may grow before a run starts it empty (it then holds one run's layers). */
const TRANSFER_REGISTRY_MAX_BYTES = 4 * 1024 ** 3

/**
 * Imports images from the Docker engine into the node's image store, skipping those already
 * there with the same image id (the store outlives the run: a warm run imports only what changed).
 * Returns the names imported, and those named anew for content the store had under another name.
 *
 * The images go through a registry of the run's own on loopback (distribution's, storage in the
 * cache beside the store): Docker pushes only the layers that registry lacks and containerd pulls
 * only the blobs its store lacks, so a change of the code moves the code's layers, not the
 * gigabytes of Debian packages under them (a `docker save` into `ctr import` streams and hashes
 * every layer of every image each time).
 */
export async function importDockerImages(
  layout: RealNodeLayout,
  names: string[],
  transferAddress: string,
): Promise<{ imported: string[]; named: string[] }> {
  const stampFile = join(layout.imageStore, 'dutil-imported.json')
  const stamps: Record<string, string> = existsSync(stampFile) ? JSON.parse(readFileSync(stampFile, 'utf8')) : {}
  const ctr = nodeCtr(paths(layout).containerdSocket, 600_000)
  const present = imagesIn(ctr)
  const ids = Object.fromEntries(
    names.map((n) => [
      n,
      execFileSync('docker', ['image', 'inspect', '--format', '{{.Id}}', n], { encoding: 'utf8' }).trim(),
    ]),
  )
  const missing = names.filter((n) => !present.has(n) || stamps[n] !== ids[n])
  // The same image under another checkout's tag (test images are tagged per checkout) is named
  // anew: the store has its content, so nothing is saved and imported again.
  const named = new Map<string, string>()
  for (const [n, id] of Object.entries(stamps)) if (present.has(n)) named.set(id, n)
  const changed: string[] = []
  for (const n of missing) {
    const same = named.get(ids[n])
    if (!same) {
      changed.push(n)
      continue
    }
    if (present.has(n)) ctr('images', 'rm', n)
    ctr('images', 'tag', same, n)
    stamps[n] = ids[n]
  }
  if (changed.length > 0) {
    try {
      await transferThroughRegistry(
        join(dirname(layout.imageStore), 'transfer-registry'),
        transferAddress,
        changed,
        ctr,
      )
    } catch (err) {
      // An engine that cannot reach this machine's loopback (rootless Docker, a remote one):
      // every layer streamed from `docker save` into the import instead.
      process.stderr.write(
        `[real-node] the transfer registry failed (${(err as Error).message}): docker save into ctr import\n`,
      )
      execFileSync(
        'bash',
        [
          '-o',
          'pipefail',
          '-c',
          'docker save "${@:2}" | ctr --address "$1" -n k8s.io images import -',
          'import',
          paths(layout).containerdSocket,
          ...changed,
        ],
        { stdio: ['ignore', 'ignore', 'inherit'], timeout: 900_000 },
      )
    }
    for (const n of changed) stamps[n] = ids[n]
  }
  // The store follows the engine: a test tag the engine no longer has (images/prune-test-tags.sh
  // removes those no checkout built for a day) leaves the store too, and its layers with it once
  // no other name holds them (containerd's collector).
  const inEngine = new Set(
    execFileSync('docker', ['image', 'ls', '--format', '{{.Repository}}:{{.Tag}}'], { encoding: 'utf8' }).split('\n'),
  )
  const stale = staleTestImages(imagesIn(ctr), names, inEngine)
  for (const n of stale) {
    try {
      ctr('images', 'rm', n)
      delete stamps[n]
    } catch (err) {
      process.stderr.write(`[real-node] ${n} stays in the store: ${(err as Error).message}\n`)
    }
  }
  if (missing.length > 0 || stale.length > 0) writeFileSync(stampFile, JSON.stringify(stamps, null, 2))
  return { imported: changed, named: missing.filter((n) => !changed.includes(n)) }
}

/**
 * The store's images under a test tag (test-<hex>) of the repositories `names` are in, that the
 * engine has no more: what leaves the store. Other repositories and tags are not ours to remove.
 */
export function staleTestImages(store: Iterable<string>, names: string[], inEngine: Set<string>): string[] {
  const repository = (ref: string) => ref.slice(0, ref.lastIndexOf(':'))
  const ours = new Set(names.map(repository))
  return [...store].filter(
    (ref) =>
      ours.has(repository(ref)) && /^test-[0-9a-f]+$/.test(ref.slice(ref.lastIndexOf(':') + 1)) && !inEngine.has(ref),
  )
}

/**
 * distribution's registry serving from `dir` (its storage in `dir/data`, its config and log
 * beside) on `address`, over plain http; `auth` lines added to its config (an htpasswd realm).
 * Resolves once `/v2/` answers `answers` (200 open, 401 behind auth); the caller kills it.
 */
export async function serveRegistry(o: {
  dir: string
  address: string
  auth?: string
  answers: 200 | 401
}): Promise<ChildProcess> {
  mkdirSync(join(o.dir, 'data'), { recursive: true })
  const config = join(o.dir, 'config.yml')
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log: { level: warn }',
      `storage: { filesystem: { rootdirectory: ${join(o.dir, 'data')} } }`,
      `http: { addr: "${o.address}" }`,
      ...(o.auth ? [o.auth] : []),
      '',
    ].join('\n'),
  )
  const log = join(o.dir, 'registry.log')
  const logFd = openSync(log, 'w')
  const child = spawn(join(BIN_DIR, 'registry'), ['serve', config], {
    stdio: ['ignore', 'ignore', logFd],
    env: { ...process.env, OTEL_TRACES_EXPORTER: 'none' },
  })
  closeSync(logFd) // the registry has its own copy
  try {
    await until(
      `the registry answers on ${o.address} (its log: ${log})`,
      async () => (await fetch(`http://${o.address}/v2/`).catch(() => undefined))?.status === o.answers,
      30_000,
      200,
    )
  } catch (err) {
    child.kill()
    throw err
  }
  return child
}

/** `name` (`registry/repository:tag`) as the transfer registry names it. */
const transferRef = (address: string, name: string) => `${address}/${name.slice(name.indexOf('/') + 1)}`

/**
 * Pushes `names` from the Docker engine to a registry started here on `address` (loopback, plain
 * http, no auth: only this machine reaches it), pulls them into the node's store and names them
 * as Docker does. Docker treats a loopback registry as insecure (plain http) by default.
 */
async function transferThroughRegistry(
  dir: string,
  address: string,
  names: string[],
  ctr: (...args: string[]) => string,
): Promise<void> {
  const data = join(dir, 'data')
  if (
    existsSync(data) &&
    Number(execFileSync('du', ['-sb', data], { encoding: 'utf8' }).split('\t')[0]) > TRANSFER_REGISTRY_MAX_BYTES
  )
    rmSync(data, { recursive: true, force: true })
  const registry = await serveRegistry({ dir, address, answers: 200 })
  try {
    const run = promisify(execFile)
    // Docker pushes at most a few layers at once per image and waits on a layer another push
    // is sending: the images go together.
    await Promise.all(
      names.map(async (n) => {
        const ref = transferRef(address, n)
        await run('docker', ['tag', n, ref])
        try {
          await run('docker', ['push', ref], { maxBuffer: 16 * 1024 * 1024, timeout: 900_000 })
        } finally {
          await run('docker', ['rmi', ref]).catch(() => undefined)
        }
      }),
    )
    for (const n of names) {
      const ref = transferRef(address, n)
      ctr('images', 'pull', '--plain-http', ref)
      ctr('images', 'tag', '--force', ref, n)
      ctr('images', 'rm', ref)
    }
  } finally {
    registry.kill()
  }
}

/** Each dutil pod that is not ready, with what its own /readyz answers (the reason it gives). */
function readinessReasons(run: (args: string[]) => string): string {
  const pods = run([
    'get',
    'pods',
    '-n',
    'dutil',
    '-o',
    'jsonpath={range .items[*]}{.metadata.name} {.spec.containers[0].readinessProbe.httpGet.port} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
  ])
  const out: string[] = []
  for (const line of pods.trim().split('\n')) {
    const [name, port, ready] = line.split(' ')
    if (!name || !port || ready === 'True') continue
    out.push(`${name}: ${run(['get', '--raw', `/api/v1/namespaces/dutil/pods/${name}:${port}/proxy/readyz`]).trim()}`)
  }
  return `${out.join('\n') || '(none)'}\n`
}

/** kubectl for a diagnostic: its output, or what went wrong (a diagnostic never throws). */
function diagnosticKubectl(kubeconfig: string): (args: string[]) => string {
  return (args) => {
    try {
      return execFileSync(join(BIN_DIR, 'kubectl'), ['--kubeconfig', kubeconfig, '--request-timeout=10s', ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    } catch (err) {
      return `(kubectl ${args.join(' ')} failed: ${String((err as { stderr?: string }).stderr ?? err).trim()})\n`
    }
  }
}

/**
 * The few lines that most often say why a release did not come up: each not-ready dutil pod's
 * own /readyz answer and the newest probe failures (make test prints them last, where CI's
 * kept output ends).
 */
export function readinessBrief(kubeconfig: string): string {
  const run = diagnosticKubectl(kubeconfig)
  const probes = run([
    'get',
    'events',
    '-n',
    'dutil',
    '--field-selector',
    'reason=Unhealthy',
    '--sort-by=.lastTimestamp',
    '-o',
    'custom-columns=COUNT:.count,OBJECT:.involvedObject.name,MESSAGE:.message',
    '--no-headers',
  ])
    .trimEnd()
    .split('\n')
    .slice(-6)
    .join('\n')
  const pods = run(['get', 'pods', '-n', 'dutil', '--no-headers']).trimEnd().split('\n').slice(0, 8).join('\n')
  return `pods:\n${pods}\nnot ready, by their /readyz:\n${readinessReasons(run)}newest probe failures:\n${probes || '(none)'}\n`
}

/**
 * What a failed start leaves to read (CI keeps only the output): the node and its pods, the
 * newest events, the readiness brief (`readinessBrief`, read once by the caller), and the end of the
 * kubelet's, containerd's, kube-proxy's and kube-router's logs.
 */
export function nodeDiagnostics(platformDir: string, kubeconfig: string, brief: string): string {
  const run = diagnosticKubectl(kubeconfig)
  const tail = (name: string, lines: number) => {
    const file = join(platformDir, 'logs', `${name}.log`)
    return existsSync(file)
      ? readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') + '\n'
      : '(no log)\n'
  }
  return [
    '--- nodes',
    run(['get', 'nodes', '-o', 'wide']),
    '--- pods',
    run(['get', 'pods', '-A', '-o', 'wide']),
    '--- newest events',
    run(['get', 'events', '-A', '--sort-by=.lastTimestamp']).trimEnd().split('\n').slice(-25).join('\n') + '\n',
    '--- dutil pods, why not ready (their /readyz, through the API server), probe failures',
    brief,
    '--- dutil pods (log ends)',
    run([
      'logs',
      '-n',
      'dutil',
      '-l',
      'app.kubernetes.io/instance=dutil',
      '--all-containers',
      '--prefix',
      '--tail=8',
      '--max-log-requests=10',
    ]),
    '--- kubelet.log (end)',
    tail('kubelet', 25),
    '--- containerd.log (end)',
    tail('containerd', 15),
    '--- kube-proxy.log (end)',
    tail('kube-proxy', 10),
    '--- kube-router.log (end)',
    tail('kube-router', 10),
  ].join('\n')
}
