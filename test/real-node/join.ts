import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { reportUnexpectedExit } from '../platform/platform.js'
import { Supervisor } from '../platform/supervisor.js'
import { paths } from './node-config.js'
import { realNodeBlocker, realNodeLayout, startRealNode, stopRealNode } from './real-node.js'

/**
 * Joins a real node (containerd + kubelet) to a running local platform and keeps it up until
 * SIGINT/SIGTERM: `node dist/test/real-node/join.js <platform dir>` (.dev under make dev).
 */
const dir = resolve(process.argv[2] ?? '.dev')
const blocker = realNodeBlocker()
if (blocker) {
  console.error(`[real-node] cannot start here: ${blocker}`)
  process.exit(2)
}
const kubeconfig = join(dir, 'kubeconfig')
const server = /server: (\S+)/.exec(readFileSync(kubeconfig, 'utf8'))![1]
const supervisor = new Supervisor(reportUnexpectedExit(dir))
const node = realNodeLayout(dir, server)
const stop = async () => {
  await stopRealNode(node, supervisor)
  await supervisor.stopAll()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
try {
  await startRealNode(node, {
    platformDir: dir,
    server,
    adminKubeconfig: kubeconfig,
    supervisor,
    addOns: false,
    progress: (m) => console.log(`[real-node] ${m}`),
  })
  console.log(`[real-node] ${node.nodeName} is Ready (containerd socket ${paths(node).containerdSocket})`)
} catch (err) {
  console.error(`[real-node] ${(err as Error).message}`)
  await stopRealNode(node, supervisor)
  await supervisor.stopAll()
  process.exit(1)
}
