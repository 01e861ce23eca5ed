import type { CoreV1Api } from '@kubernetes/client-node'
import { PLAYGROUND_SIGNING_ENTRY, WORKSPACE_SIGNING_ENTRY } from '../../contract/api-keys.js'
import { objectNameOf } from '../../contract/ids.js'
import { SECRET_OBJECTS, SecretEntries } from '../../platform/secret-entries.js'

export interface SigningSecret {
  secret: string
  source: 'key' | 'workspace' | 'playground'
}

export interface SecretSource {
  forKey(apiKeyId: string): Promise<SigningSecret | null>
}

/**
 * The `whsec_` secret a job's callback is signed with, read from the signing Secret at every
 * attempt (never cached), so a rotation takes effect for the next attempt. A key without a secret
 * of its own uses the workspace entry; a console playground run (no key) the playground entry,
 * never the workspace's. Null when the entry needed does not exist.
 */
export class KubeSigningSecrets implements SecretSource {
  private readonly entries: SecretEntries

  constructor(
    core: CoreV1Api,
    namespace: string,
    secretName: string = SECRET_OBJECTS.signing,
    /** Whether a key is revoked: its callbacks never fall back to the workspace secret. */
    private readonly revoked: (apiKeyId: string) => Promise<boolean> = async () => false,
  ) {
    this.entries = new SecretEntries(core, namespace, secretName)
  }

  async forKey(apiKeyId: string): Promise<SigningSecret | null> {
    const all = await this.entries.all()
    if (!apiKeyId) {
      const playground = all[PLAYGROUND_SIGNING_ENTRY]?.trim()
      return playground ? { secret: playground, source: 'playground' } : null
    }
    const own = all[objectNameOf(apiKeyId)]?.trim()
    if (own) return { secret: own, source: 'key' }
    // A revoked key's entry is removed once its callbacks settled: a later redelivery fails.
    if (await this.revoked(apiKeyId)) return null
    const workspace = all[WORKSPACE_SIGNING_ENTRY]?.trim()
    return workspace ? { secret: workspace, source: 'workspace' } : null
  }
}
