import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { type Platform, REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'

/**
 * The local platform a bench runs against (fresh, under .bench/, loopback URLs allowed, no test
 * hooks) and a key of its own with a rate limit out of the way.
 */
export async function benchPlatform(keyName: string): Promise<{ platform: Platform; key: string }> {
  const platform = await startPlatform({
    dir: join(REPO_ROOT, '.bench'),
    ports: TEST_PORTS,
    fresh: true,
    allowLoopbackUrls: true,
    testHooks: false,
  })
  try {
    const kc = new KubeConfig()
    kc.loadFromFile(platform.kubeconfigPath)
    const { key } = await new ApiKeyAdmin(kc, 'dutil').create({
      name: keyName,
      utilities: [],
      rateLimitPerMinute: 100_000_000,
    })
    return { platform, key }
  } catch (err) {
    await platform.stop()
    throw err
  }
}
