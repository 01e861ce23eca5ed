import { EXPIRY_DAYS } from '../contract/api-keys.js'
import { CONTRACT_SLUGS } from '../contract/utility.js'
import { apiStatus } from '../platform/kube.js'
import { ApiKeyAdmin, RevokedKeyError, type RevealedSecret } from '../platform/api-key-admin.js'
import type { KubeTarget } from './kube-target.js'
import { age, renderList, renderOne, type Column, type OutputFormat } from './output.js'
import { UsageError } from './usage-error.js'

/** `dutil keys …`: API keys as the cluster holds them (ApiKey resources and the signing Secret). */
export interface CreateOptions {
  name?: string
  utilities?: string
  rateLimit?: string
  expiresInDays?: string
  owner?: string
}

type KeyResource = Awaited<ReturnType<ApiKeyAdmin['list']>>[number]

const KEY_COLUMNS: Array<Column<KeyResource>> = [
  { header: 'ID', value: (k) => k.spec.keyId },
  { header: 'NAME', value: (k) => k.spec.name },
  { header: 'PREFIX', value: (k) => k.spec.prefix },
  { header: 'UTILITIES', value: (k) => (k.spec.utilities.length ? k.spec.utilities.join(',') : 'all') },
  { header: 'RATE/MIN', value: (k) => k.spec.rateLimitPerMinute },
  { header: 'EXPIRES', value: (k) => k.spec.expiresAt ?? 'never' },
  { header: 'REVOKED', value: (k) => k.spec.revokedAt ?? '-' },
  { header: 'AGE', value: (k) => age(k.spec.createdAt) },
  { header: 'CREATED', value: (k) => k.spec.createdAt, wide: true },
]

export function parseUtilities(raw: string | undefined): string[] {
  if (!raw) return []
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const unknown = list.filter((s) => !(CONTRACT_SLUGS as readonly string[]).includes(s))
  if (unknown.length)
    throw new UsageError(`unknown utilities: ${unknown.join(', ')} (known: ${CONTRACT_SLUGS.join(', ')})`)
  return [...new Set(list)]
}

export function parsePositiveInt(raw: string | undefined, what: string): number | undefined {
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new UsageError(`${what} must be a positive whole number`)
  return Number(raw)
}

function admin(target: KubeTarget): ApiKeyAdmin {
  return new ApiKeyAdmin(target.load(), target.namespace)
}

async function known<T>(id: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action()
  } catch (err) {
    if (apiStatus(err) === 404) throw new UsageError(`no API key ${id}`)
    if (err instanceof RevokedKeyError) throw new UsageError(err.message)
    throw err
  }
}

/** An owner name as the ApiKey schema takes it: no spaces or colons, at most 200 characters. */
function parseOwner(owner: string | undefined): string | undefined {
  if (owner === undefined) return undefined
  const name = owner.trim()
  if (!/^[^\s:]{1,200}$/.test(name))
    throw new UsageError(
      '--owner must be 1 to 200 characters without spaces or colons (e.g. an e-mail or an application name)',
    )
  return name
}

export async function createKey(target: KubeTarget, o: CreateOptions, format: OutputFormat): Promise<string> {
  if (!o.name) throw new UsageError('keys create needs --name (where the key runs, e.g. --name laptop)')
  const expires = parsePositiveInt(o.expiresInDays, '--expires-in-days')
  if (expires !== undefined && !(EXPIRY_DAYS as readonly number[]).includes(expires))
    throw new UsageError('--expires-in-days must be 30, 90 or 365 (omit it for a key that never expires)')
  const created = await admin(target).create({
    name: o.name,
    utilities: parseUtilities(o.utilities),
    rateLimitPerMinute:
      parsePositiveInt(o.rateLimit, '--rate-limit') ??
      parsePositiveInt(process.env.DUTIL_DEFAULT_RATE_LIMIT, 'DUTIL_DEFAULT_RATE_LIMIT'),
    expiresInDays: expires,
    owner: parseOwner(o.owner),
  })
  return renderOne(
    format,
    created,
    () =>
      `API key ${created.id} created. It is shown only this once:\n\n  key:            ${created.key}\n  signing secret: ${created.signingSecret}\n\nUse it from this shell: dutil config set-context NAME --url URL --api-key ${created.key}`,
  )
}

export async function listKeys(target: KubeTarget, format: OutputFormat): Promise<string> {
  const keys = await admin(target).list()
  return renderList(format, keys, KEY_COLUMNS, (k) => ({ id: k.spec.keyId, ...k.spec, hash: undefined }))
}

export async function revokeKey(target: KubeTarget, id: string): Promise<string> {
  await known(id, () => admin(target).revoke(id))
  return `API key ${id} revoked. Its queued jobs are cancelled; those already running finish.`
}

export async function signingSecret(
  target: KubeTarget,
  id: string,
  rotate: boolean,
  format: OutputFormat,
): Promise<string> {
  const a = admin(target)
  const revealed: RevealedSecret = await known(id, () => (rotate ? a.rotateSecret(id) : a.revealSecret(id)))
  return renderOne(format, revealed, () => {
    const note =
      revealed.source === 'workspace'
        ? '\n(this key has no secret of its own and uses the workspace secret; `keys rotate-secret` gives it one)'
        : ''
    const heading = rotate
      ? `New signing secret of ${id} (signs every callback attempt from now on):`
      : `Signing secret of ${id}:`
    return `${heading}\n\n  ${revealed.signingSecret}\n${note}`
  })
}
