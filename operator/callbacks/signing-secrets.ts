import type { CoreV1Api } from '@kubernetes/client-node'
import { WORKSPACE_SIGNING_ENTRY } from '../../contract/api-keys.js'
import { objectNameOf } from '../../contract/ids.js'
import { SECRET_OBJECTS, SecretEntries } from '../../platform/secret-entries.js'

export interface SigningSecret {
  secret: string
  source: 'key' | 'workspace'
}

export interface SecretSource {
  forKey(apiKeyId: string): Promise<SigningSecret | null>
}

/**
 * The `whsec_` secret a job's callback is signed with, read from the signing Secret at every
 * attempt (never cached), so a rotation takes effect for the next attempt. A key without a secret
 * of its own, and a console playground run (no key), use the workspace entry; null when neither exists.
 */
export class KubeSigningSecrets implements SecretSource {
  private readonly entries: SecretEntries

  constructor(core: CoreV1Api, namespace: string, secretName: string = SECRET_OBJECTS.signing) {
    this.entries = new SecretEntries(core, namespace, secretName)
  }

  async forKey(apiKeyId: string): Promise<SigningSecret | null> {
    const all = await this.entries.all()
    // Console playground runs have no key: the workspace secret signs them.
    const own = apiKeyId ? all[objectNameOf(apiKeyId)]?.trim() : undefined
    if (own) return { secret: own, source: 'key' }
    const workspace = all[WORKSPACE_SIGNING_ENTRY]?.trim()
    return workspace ? { secret: workspace, source: 'workspace' } : null
  }
}
