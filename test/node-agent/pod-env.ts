// The environment a container process starts with. A container gets its image's environment and
// its pod spec's, nothing of the node's: here the agent's PATH stands in for the image's (the
// image root is this checkout, its programs the host's), and each pod has a home of its own, so a
// program in a pod never reads the config of the user who runs the platform (a CLI context that
// `make dev` wrote, say).
import path from 'node:path'

/** The agent's variables that stand in for an image's own environment. */
export const IMAGE_ENV_NAMES = ['PATH', 'LANG', 'LC_ALL', 'TZ'] as const

/** Where a pod's home lies, under its own directory on the node. */
export function podHome(podDir: string): string {
  return path.join(podDir, 'home')
}

/**
 * The environment of one container (pure): the image's stand-in from the agent's environment,
 * the pod's own HOME and XDG directories, HOSTNAME, then the container's declared environment
 * (which wins, as a pod spec's env wins over an image's).
 */
export function containerProcessEnv(
  agentEnv: NodeJS.ProcessEnv,
  podDir: string,
  hostname: string,
  declared: ReadonlyMap<string, string>,
): NodeJS.ProcessEnv {
  const image: NodeJS.ProcessEnv = {}
  for (const name of IMAGE_ENV_NAMES) if (agentEnv[name] !== undefined) image[name] = agentEnv[name]
  const home = podHome(podDir)
  return {
    ...image,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    HOSTNAME: hostname,
    ...Object.fromEntries(declared),
  }
}
