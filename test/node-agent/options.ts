// Command-line flags (or environment variables) of the node agent, checked once at start.
import path from 'node:path'
import { parseArgs } from 'node:util'

export interface AgentOptions {
  /** Kubeconfig with rights to nodes, leases, pods, pods/status, secrets, configmaps, tokens. */
  kubeconfig: string
  /** Node to register and serve. Default `dutil-dev-node`. */
  nodeName: string
  /** Parent of the per-pod scratch directories `<workDir>/<pod uid>/`. Default `<cwd>/.dev/node-agent/<nodeName>`. */
  workDir: string
  /** Host directory mounted as every container image's `/app`. Default: the current directory (repo root). */
  imageRoot: string
  /**
   * The images this node has (glob patterns, `*` for any run of characters): the image root
   * stands in for each. Any other image cannot be pulled (there is no registry to pull from), and
   * its pod waits in ErrImagePull / ImagePullBackOff as on a real node. Default: every image.
   */
  images: string[]
}

export const USAGE = `usage: tsx test/node-agent/main.ts --kubeconfig <path> [--node-name <name>] [--work-dir <dir>] [--image-root <dir>] [--images <glob,...>]
  env fallbacks: KUBECONFIG, DUTIL_NODE_NAME, DUTIL_NODE_WORK_DIR, DUTIL_NODE_IMAGE_ROOT, DUTIL_NODE_IMAGES`

export class UsageError extends Error {}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv, cwd: string): AgentOptions {
  let values: Record<string, string | undefined>
  try {
    ;({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        kubeconfig: { type: 'string' },
        'node-name': { type: 'string' },
        'work-dir': { type: 'string' },
        'image-root': { type: 'string' },
        images: { type: 'string' },
      },
    }))
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err))
  }
  const kubeconfig = values.kubeconfig ?? env.KUBECONFIG
  if (!kubeconfig) throw new UsageError('--kubeconfig is required')
  const nodeName = values['node-name'] ?? env.DUTIL_NODE_NAME ?? 'dutil-dev-node'
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(nodeName))
    throw new UsageError(`invalid --node-name ${JSON.stringify(nodeName)}`)
  const workDir = values['work-dir'] ?? env.DUTIL_NODE_WORK_DIR ?? path.join(cwd, '.dev', 'node-agent', nodeName)
  const imageRoot = values['image-root'] ?? env.DUTIL_NODE_IMAGE_ROOT ?? cwd
  const images = (values.images ?? env.DUTIL_NODE_IMAGES ?? '*')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  return {
    kubeconfig: path.resolve(cwd, kubeconfig),
    nodeName,
    workDir: path.resolve(cwd, workDir),
    imageRoot: path.resolve(cwd, imageRoot),
    images,
  }
}

/** Whether an image matches one of the node's image patterns (`*` matches any run of characters). */
export function imagePresent(image: string, patterns: readonly string[]): boolean {
  return patterns.some((p) =>
    new RegExp(
      `^${p
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    ).test(image),
  )
}
