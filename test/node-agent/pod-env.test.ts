import { describe, expect, it } from 'vitest'
import { containerProcessEnv } from './pod-env.js'

const AGENT = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  LANG: 'C.UTF-8',
  HOME: '/root',
  XDG_CONFIG_HOME: '/root/.config',
  KUBECONFIG: '/root/.kube/config',
  DUTIL_CONFIG: '/root/dutil.yaml',
  AWS_SECRET_ACCESS_KEY: 'host-secret',
}

describe('a container process’s environment under the node agent', () => {
  it('has its pod’s own home and XDG directories, and nothing of the node’s but PATH and locale', () => {
    const env = containerProcessEnv(AGENT, '/node/uid-1', 'dutil-keys', new Map([['DUTIL_NAMESPACE', 'dutil']]))
    expect(env).toEqual({
      PATH: AGENT.PATH,
      LANG: 'C.UTF-8',
      HOME: '/node/uid-1/home',
      XDG_CONFIG_HOME: '/node/uid-1/home/.config',
      XDG_CACHE_HOME: '/node/uid-1/home/.cache',
      XDG_DATA_HOME: '/node/uid-1/home/.local/share',
      XDG_STATE_HOME: '/node/uid-1/home/.local/state',
      HOSTNAME: 'dutil-keys',
      DUTIL_NAMESPACE: 'dutil',
    })
  })

  it('lets the pod spec’s env win, as it wins over an image’s', () => {
    const env = containerProcessEnv(
      AGENT,
      '/node/uid-2',
      'p',
      new Map([
        ['HOME', '/tmp'],
        ['PATH', '/app/bin'],
      ]),
    )
    expect(env.HOME).toBe('/tmp')
    expect(env.PATH).toBe('/app/bin')
    expect(env.XDG_CONFIG_HOME).toBe('/node/uid-2/home/.config')
  })
})
