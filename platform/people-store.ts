import { createHash, randomBytes } from 'node:crypto'
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type ObjectCache,
} from '@kubernetes/client-node'
import { API_GROUP, API_GROUP_VERSION, API_VERSION, LABELS, MANAGED_BY } from '../contract/api-group.js'
import {
  CONSOLE_INVITE,
  CONSOLE_USER,
  INVITE_TTL_MS,
  inviteObjectName,
  normalizeEmail,
  userObjectName,
  type ConsoleInviteResource,
  type ConsoleUserResource,
  type ConsoleUserSpec,
  type Role,
} from '../contract/console-resources.js'
import { newId } from '../contract/ids.js'
import { SECRET_OBJECTS, SecretEntries } from './secret-entries.js'
import { apiStatus } from './kube.js'
import { isoMs, parseTime } from '../contract/time.js'

export interface Credentials {
  passwordHash: string | null
  totpSecret: string | null
}

export interface IssuedInvite {
  invite: ConsoleInviteResource
  /** The link token; shown once, only its SHA-256 is stored. */
  token: string
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex')

/**
 * People and invites of the console as ConsoleUser / ConsoleInvite resources, with each
 * person's password hash and TOTP secret in a Secret the ConsoleUser owns. Reads come from
 * watched caches when the gateway passes them (the CLI reads the API directly).
 */
export class PeopleStore {
  private readonly custom: CustomObjectsApi
  private readonly credentials: SecretEntries

  constructor(
    kc: KubeConfig,
    readonly namespace: string,
    private readonly caches?: { users: ObjectCache<ConsoleUserResource>; invites: ObjectCache<ConsoleInviteResource> },
    /**
     * Look-ups past the watched caches for what they do not hold (an invite or a person made a
     * moment ago) take a token first: a flood of made-up tokens or e-mails before sign-in costs
     * the API server this budget and no more (shared with unknown API keys).
     */
    private readonly fallbackBudget?: { take(): boolean },
  ) {
    this.custom = kc.makeApiClient(CustomObjectsApi)
    this.credentials = new SecretEntries(kc.makeApiClient(CoreV1Api), namespace, SECRET_OBJECTS.consoleCredentials)
  }

  private coords(plural: string) {
    return { group: API_GROUP, version: API_VERSION, namespace: this.namespace, plural }
  }

  async listUsers(): Promise<ConsoleUserResource[]> {
    if (this.caches) return [...this.caches.users.list(this.namespace)]
    return (
      (await this.custom.listNamespacedCustomObject(this.coords(CONSOLE_USER.plural))) as {
        items: ConsoleUserResource[]
      }
    ).items
  }

  /** Straight from the API (fresh resourceVersions), for read-check-write changes. */
  async listUsersFresh(): Promise<ConsoleUserResource[]> {
    return (
      (await this.custom.listNamespacedCustomObject(this.coords(CONSOLE_USER.plural))) as {
        items: ConsoleUserResource[]
      }
    ).items
  }

  async listInvites(): Promise<ConsoleInviteResource[]> {
    if (this.caches) return [...this.caches.invites.list(this.namespace)]
    return this.listInvitesFresh()
  }

  /**
   * Straight from the API: what an admin just did (an invite issued, revoked, replaced) shows on
   * the page they reload right after, which a watched cache may not have seen yet.
   */
  async listInvitesFresh(): Promise<ConsoleInviteResource[]> {
    return (
      (await this.custom.listNamespacedCustomObject(this.coords(CONSOLE_INVITE.plural))) as {
        items: ConsoleInviteResource[]
      }
    ).items
  }

  /** A user by object name; the cache first, then the API (a user created a moment ago). */
  async getUser(name: string, fresh = false): Promise<ConsoleUserResource | undefined> {
    const cached = fresh ? undefined : this.caches?.users.get(name, this.namespace)
    if (cached) return cached
    try {
      return (await this.custom.getNamespacedCustomObject({
        ...this.coords(CONSOLE_USER.plural),
        name,
      })) as ConsoleUserResource
    } catch (err) {
      if (apiStatus(err) === 404) return undefined
      throw err
    }
  }

  /**
   * Sign-in paths read fresh: a person disabled a moment ago must not get in through a stale
   * cache. An e-mail the cache does not know is read from the API server only within the
   * fall-back budget (a person invited a moment ago; otherwise nobody).
   */
  async findUserByEmail(email: string, fresh = false): Promise<ConsoleUserResource | undefined> {
    const name = userObjectName(email)
    if (fresh && this.caches && !this.caches.users.get(name, this.namespace) && !(this.fallbackBudget?.take() ?? true))
      return undefined
    return this.getUser(name, fresh)
  }

  async findUserById(userId: string): Promise<ConsoleUserResource | undefined> {
    return (await this.listUsers()).find((u) => u.spec.userId === userId)
  }

  /**
   * Creates a person. The object name derives from the e-mail, so a second account for the same
   * address fails with 409 (the caller turns it into a conflict).
   */
  async createUser(
    opts: { email: string; name: string; role: Role; passwordHash?: string; oidcSubject?: string },
    now = Date.now(),
  ): Promise<ConsoleUserResource> {
    const email = normalizeEmail(opts.email)
    const name = userObjectName(email)
    const spec: ConsoleUserSpec = {
      userId: newId('usr', now),
      email,
      name: opts.name,
      role: opts.role,
      disabled: false,
      createdAt: isoMs(now),
      totpEnabled: false,
      credentialsSecretName: SECRET_OBJECTS.consoleCredentials,
      ...(opts.oidcSubject ? { oidcSubject: opts.oidcSubject } : {}),
    }
    const body: ConsoleUserResource = {
      apiVersion: API_GROUP_VERSION,
      kind: 'ConsoleUser',
      metadata: { name, labels: { [LABELS.managedBy]: MANAGED_BY } },
      spec,
    }
    const created = (await this.custom.createNamespacedCustomObject({
      ...this.coords(CONSOLE_USER.plural),
      body,
    })) as ConsoleUserResource
    await this.writeCredentials(created, { passwordHash: opts.passwordHash ?? null, totpSecret: null })
    return created
  }

  async patchUser(
    name: string,
    spec: Partial<ConsoleUserSpec>,
    resourceVersion?: string,
  ): Promise<ConsoleUserResource> {
    return (await this.custom.patchNamespacedCustomObject(
      {
        ...this.coords(CONSOLE_USER.plural),
        name,
        body: { metadata: resourceVersion ? { resourceVersion } : {}, spec },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as ConsoleUserResource
  }

  async recordSignIn(name: string, now = Date.now()): Promise<void> {
    await this.custom.patchNamespacedCustomObjectStatus(
      { ...this.coords(CONSOLE_USER.plural), name, body: { status: { lastSignInAt: isoMs(now) } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )
  }

  /** A person's password hash and TOTP secret: two entries of the console credentials Secret. */
  async readCredentials(user: ConsoleUserResource): Promise<Credentials> {
    const all = await this.credentials.all()
    const name = user.metadata.name
    return { passwordHash: all[`${name}.passwordHash`] || null, totpSecret: all[`${name}.totpSecret`] || null }
  }

  /** Writes both of a person's entries at once (null removes one). */
  async writeCredentials(user: ConsoleUserResource, creds: Credentials): Promise<void> {
    const name = user.metadata.name
    await this.credentials.write({
      [`${name}.passwordHash`]: creds.passwordHash,
      [`${name}.totpSecret`]: creds.totpSecret,
    })
  }

  /**
   * Issues an invite for an address. Re-inviting the same address replaces the earlier invite,
   * whose link stops working (only the new token's hash is stored).
   */
  async invite(opts: { email: string; role: Role; invitedBy: string }, now = Date.now()): Promise<IssuedInvite> {
    const email = normalizeEmail(opts.email)
    const token = randomBytes(32).toString('base64url')
    const name = inviteObjectName(email)
    const body: ConsoleInviteResource = {
      apiVersion: API_GROUP_VERSION,
      kind: 'ConsoleInvite',
      metadata: { name, labels: { [LABELS.managedBy]: MANAGED_BY } },
      spec: {
        inviteId: newId('inv', now),
        email,
        role: opts.role,
        tokenHash: sha256(token),
        createdAt: isoMs(now),
        expiresAt: isoMs(now + INVITE_TTL_MS),
        invitedBy: opts.invitedBy,
      },
    }
    try {
      await this.custom.deleteNamespacedCustomObject({ ...this.coords(CONSOLE_INVITE.plural), name })
    } catch (err) {
      if (apiStatus(err) !== 404) throw err
    }
    const invite = (await this.custom.createNamespacedCustomObject({
      ...this.coords(CONSOLE_INVITE.plural),
      body,
    })) as ConsoleInviteResource
    return { invite, token }
  }

  /** The open invite a link token belongs to; undefined when unknown, replaced or expired. */
  async findInvite(token: string, now = Date.now()): Promise<ConsoleInviteResource | undefined> {
    if (!/^[\w-]{43}$/.test(token)) return undefined
    const hash = sha256(token)
    let found = (await this.listInvites()).find((i) => i.spec.tokenHash === hash)
    // An invite issued a moment ago may not have reached the cache yet.
    if (!found && this.caches && (this.fallbackBudget?.take() ?? true))
      found = (await this.listInvitesFresh()).find((i) => i.spec.tokenHash === hash)
    if (!found) return undefined
    return (parseTime(found.spec.expiresAt) ?? 0) > now ? found : undefined
  }

  /** Deletes an invite, only if it is still the same object (a re-issued one is left alone). */
  async deleteInvite(invite: ConsoleInviteResource): Promise<boolean> {
    try {
      await this.custom.deleteNamespacedCustomObject({
        ...this.coords(CONSOLE_INVITE.plural),
        name: invite.metadata.name,
        body: { preconditions: { uid: invite.metadata.uid, resourceVersion: invite.metadata.resourceVersion } },
      })
      return true
    } catch (err) {
      if (apiStatus(err) === 404 || apiStatus(err) === 409) return false
      throw err
    }
  }

  async deleteInviteById(inviteId: string): Promise<boolean> {
    const inv = (await this.listInvitesFresh()).find((i) => i.spec.inviteId === inviteId)
    return inv ? this.deleteInvite(inv) : false
  }
}
