import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node'
import { BIN_DIR, REPO_ROOT } from '../platform/platform.js'
import type { Supervisor } from '../platform/supervisor.js'
import { until } from '../platform/wait-for.js'
import { cniConflist, containerdConfig, kubeletConfig, kubeletKubeconfig, paths, type RealNodeLayout } from './node-config.js'

export const SANDBOX_IMAGE = 'dutil.local/pause:3.10'

/** Why this host cannot run a real node (the test summary prints it); null when it can. */
export function realNodeBlocker(): string | null {
  if (process.getuid?.() !== 0) return 'the real node needs root (containerd, runc, cgroups, network namespaces)'
  for (const tool of ['containerd', 'runc', 'ctr']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' })
    } catch {
      return `${tool} is not installed (make deps installs Debian's containerd and runc)`
    }
  }
  if (!existsSync(join(CNI_BIN_DIR, 'bridge'))) return `no CNI plugins in ${CNI_BIN_DIR} (Debian's containernetworking-plugins)`
  if (!existsSync(join(BIN_DIR, 'kubelet'))) return `${join(BIN_DIR, 'kubelet')} is missing (test/platform/build-binaries.sh kubelet)`
  return null
}

const CNI_BIN_DIR = '/usr/lib/cni'

/** The node's address, on an interface of its own (NODE_INTERFACE) that the start script makes on this machine. */
export const NODE_IP = '10.250.0.1'
const NODE_INTERFACE = 'dutil-node0'

/** Makes the interface that holds the node's address (kept between runs; idempotent). */
function ensureNodeAddress(ip: string): void {
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

export function hostCgroupVersion(): 1 | 2 {
  return execFileSync('stat', ['-fc', '%T', '/sys/fs/cgroup'], { encoding: 'utf8' }).trim() === 'cgroup2fs' ? 2 : 1
}

export interface RealNodeOptions {
  /** The platform's state dir (its pki/ holds the CA that signs the node's certificate). */
  platformDir: string
  server: string
  adminKubeconfig: string
  supervisor: Supervisor
  nodeName?: string
  kubeletPort?: number
  healthzPort?: number
  progress?: (m: string) => void
}

/**
 * A real node joined to the local control plane: Debian's containerd and runc, the kubelet of
 * the control plane's release, a bridge CNI network, and the sandbox image built here. Resolves
 * once the Node is Ready.
 */
export async function startRealNode(o: RealNodeOptions): Promise<RealNodeLayout> {
  const say = o.progress ?? (() => {})
  const dir = join(o.platformDir, 'real-node')
  const layout: RealNodeLayout = {
    dir,
    nodeName: o.nodeName ?? 'dutil-real-node',
    server: o.server,
    nodeIp: NODE_IP,
    caFile: join(o.platformDir, 'pki', 'ca.crt'),
    kubeletPort: o.kubeletPort ?? 20250,
    healthzPort: o.healthzPort ?? 20248,
    podCidr: '10.244.0.0/24',
    cgroupVersion: hostCgroupVersion(),
    cniBinDir: CNI_BIN_DIR,
    sandboxImage: SANDBOX_IMAGE,
  }
  const p = paths(layout)
  ensureNodeAddress(NODE_IP)
  for (const d of [p.containerdRoot, p.containerdState, p.cniConfDir, p.kubeletRoot, p.podLogs]) mkdirSync(d, { recursive: true })
  writeFileSync(p.containerdConfig, containerdConfig(layout))
  writeFileSync(join(p.cniConfDir, '10-dutil.conflist'), cniConflist(layout))
  writeFileSync(p.kubeletConfig, kubeletConfig(layout))
  // The node's own identity (Node authorizer): system:node:<name> in system:nodes.
  const pki = join(o.platformDir, 'pki')
  const cert = join(dir, 'kubelet', 'node.crt')
  const key = join(dir, 'kubelet', 'node.key')
  execFileSync('bash', ['-c', `openssl req -newkey rsa:2048 -nodes -subj "/O=system:nodes/CN=system:node:${layout.nodeName}" -keyout "$1" -out "$1.csr" 2>/dev/null && printf 'extendedKeyUsage=clientAuth\\nkeyUsage=digitalSignature,keyEncipherment\\n' > "$1.ext" && openssl x509 -req -in "$1.csr" -CA "$3/ca.crt" -CAkey "$3/ca.key" -CAcreateserial -days 30 -extfile "$1.ext" -out "$2" 2>/dev/null && rm -f "$1.csr" "$1.ext"`, '_', key, cert, pki])
  writeFileSync(p.kubeletKubeconfig, kubeletKubeconfig(layout, cert, key), { mode: 0o600 })

  say('starting containerd')
  o.supervisor.start({ name: 'containerd', command: 'containerd', args: ['--config', p.containerdConfig], logFile: join(o.platformDir, 'logs', 'containerd.log') })
  await until('containerd socket', async () => existsSync(p.containerdSocket), 30_000, 100)
  const ctr = (...args: string[]) => execFileSync('ctr', ['--address', p.containerdSocket, '-n', 'k8s.io', ...args], { encoding: 'utf8' })
  if (!ctr('images', 'ls', '-q').split('\n').includes(SANDBOX_IMAGE)) {
    say('building and importing the sandbox image')
    const tar = execFileSync(join(REPO_ROOT, 'test', 'real-node', 'pause-image.sh'), [join(dir, 'pause.tar')], { encoding: 'utf8' }).trim()
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
      `--node-ip=${NODE_IP}`,
      '--v=1',
    ],
    logFile: join(o.platformDir, 'logs', 'kubelet.log'),
  })
  const kc = new KubeConfig()
  kc.loadFromFile(o.adminKubeconfig)
  const core = kc.makeApiClient(CoreV1Api)
  await until(
    `node ${layout.nodeName} Ready`,
    async () => (await core.readNode({ name: layout.nodeName }).catch(() => undefined))?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    120_000,
    500,
  )
  return layout
}

/** Imports a `docker save` (or OCI layout) tar into the node's image store. */
export function importImage(layout: RealNodeLayout, tar: string): void {
  execFileSync('ctr', ['--address', paths(layout).containerdSocket, '-n', 'k8s.io', 'images', 'import', tar], { stdio: 'inherit' })
}
