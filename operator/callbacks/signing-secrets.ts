import type { CoreV1Api } from '@kubernetes/client-node'
import { SIGNING_SECRET_KEY, signingSecretNameFor } from '../../contract/api-keys.js'
import { objectNameOf } from '../../contract/ids.js'
import { apiStatus } from '../../contract/kube.js'

export interface SigningSecret {
  secret: string
  source: 'key' | 'workspace'
}

export interface SecretSource {
  forKey(apiKeyId: string): Promise<SigningSecret | null>
}

/**
 * The `whsec_` secret a job's callback is signed with, read from its Secret at every attempt
 * (never cached), so a rotation takes effect for the next attempt. A key without a secret of
 * its own, and a console playground run (no key), use the workspace secret; null when neither exists.
 */
export class KubeSigningSecrets implements SecretSource {
  constructor(
    private readonly core: CoreV1Api,
    private readonly namespace: string,
    private readonly workspaceSecretName: string,
  ) {}

  async forKey(apiKeyId: string): Promise<SigningSecret | null> {
    // Console playground runs have no key: the workspace secret signs them.
    const own = apiKeyId ? await this.read(signingSecretNameFor(objectNameOf(apiKeyId))) : null
    if (own) return { secret: own, source: 'key' }
    const workspace = await this.read(this.workspaceSecretName)
    return workspace ? { secret: workspace, source: 'workspace' } : null
  }

  private async read(name: string): Promise<string | null> {
    try {
      const s = await this.core.readNamespacedSecret({ name, namespace: this.namespace })
      const value = s.data?.[SIGNING_SECRET_KEY]
      return value ? Buffer.from(value, 'base64').toString('utf8').trim() || null : null
    } catch (err) {
      if (apiStatus(err) === 404) return null
      throw err
    }
  }
}
