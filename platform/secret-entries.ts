import { PatchStrategy, setHeaderOptions, type CoreV1Api } from '@kubernetes/client-node'
import { LABELS, MANAGED_BY } from '../contract/api-group.js'
import { apiStatus } from './kube.js'

/**
 * The two Secrets dutil keeps its own secrets in, each a map of entries. Fixed names let RBAC
 * name them (`resourceNames`): the gateway and the operator may read these and no other Secret
 * of the namespace (docs/adr/0012-secrets-in-two-named-objects.md).
 */
export const SECRET_OBJECTS = {
  /** Callback signing secrets: `workspace`, and one entry per ApiKey (its object name). */
  signing: 'dutil-signing-secrets',
  /** Console credentials: `<user object>.passwordHash`, `<user object>.totpSecret`. */
  consoleCredentials: 'dutil-console-credentials',
} as const

/** What a Secret's data key may be (Kubernetes: [-._a-zA-Z0-9]+). */
const ENTRY = /^[-._a-zA-Z0-9]{1,253}$/

const decode = (v: string | undefined) => (v ? Buffer.from(v, 'base64').toString('utf8') : null)

/**
 * Entries of one Secret, each written on its own: a JSON merge patch of `data` sets or removes
 * exactly the entries named, on the server's current object, so concurrent writers of different
 * entries never overwrite each other and need no read first. The Secret is made on first write.
 */
export class SecretEntries {
  constructor(
    private readonly core: CoreV1Api,
    private readonly namespace: string,
    readonly name: string,
  ) {}

  /** All entries (one read), or none when the Secret does not exist yet. */
  async all(): Promise<Record<string, string>> {
    try {
      const s = await this.core.readNamespacedSecret({ name: this.name, namespace: this.namespace })
      return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, decode(v) ?? '']))
    } catch (err) {
      if (apiStatus(err) === 404) return {}
      throw err
    }
  }

  async get(entry: string): Promise<string | null> {
    return (await this.all())[entry] || null
  }

  /** Sets (a string) or removes (null) each named entry, in one write. */
  async write(entries: Record<string, string | null>): Promise<void> {
    const data: Record<string, string | null> = {}
    for (const [k, v] of Object.entries(entries)) {
      if (!ENTRY.test(k)) throw new Error(`not a valid Secret entry name: ${JSON.stringify(k)}`)
      data[k] = v === null ? null : Buffer.from(v, 'utf8').toString('base64')
    }
    const patch = () =>
      this.core.patchNamespacedSecret(
        { name: this.name, namespace: this.namespace, body: { data } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
    try {
      await patch()
    } catch (err) {
      if (apiStatus(err) !== 404) throw err
      await this.create()
      await patch()
    }
  }

  /**
   * Sets an entry only when it has none yet, and returns the entry's value either way (a
   * resourceVersion-conditioned replace: of two concurrent first writers, one wins and both
   * return its value).
   */
  async setIfAbsent(entry: string, value: string): Promise<string> {
    for (let attempt = 0; attempt < 5; attempt++) {
      let current
      try {
        current = await this.core.readNamespacedSecret({ name: this.name, namespace: this.namespace })
      } catch (err) {
        if (apiStatus(err) !== 404) throw err
        await this.create()
        continue
      }
      const existing = decode(current.data?.[entry])
      if (existing) return existing
      try {
        await this.core.replaceNamespacedSecret({
          name: this.name,
          namespace: this.namespace,
          body: {
            ...current,
            data: { ...(current.data ?? {}), [entry]: Buffer.from(value, 'utf8').toString('base64') },
          },
        })
        return value
      } catch (err) {
        if (apiStatus(err) !== 409) throw err
      }
    }
    throw new Error(`${this.name}: could not set ${entry} (kept conflicting)`)
  }

  private async create(): Promise<void> {
    try {
      await this.core.createNamespacedSecret({
        namespace: this.namespace,
        body: { metadata: { name: this.name, labels: { [LABELS.managedBy]: MANAGED_BY } }, type: 'Opaque', data: {} },
      })
    } catch (err) {
      if (apiStatus(err) !== 409) throw err
    }
  }
}
