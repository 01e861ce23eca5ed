import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto'
import { joinSecrets, splitSecrets, type SecretPath } from '../contract/secret-fields.js'

/**
 * Secrets of a job's input (passwords) sealed where the input is stored
 * (docs/adr/0042-sealed-input-secrets.md). The gateway seals them with the job's own key, made
 * from the installation's sealing key and the job id; the operator makes the same key when the
 * job starts and hands it to the job's runner alone, with its storage credentials; the runner
 * opens them in memory. The stored input holds only `SEALED_FIELD`, a version, a nonce and
 * AES-256-GCM's ciphertext and tag, bound to the job id.
 */

/** The stored input's field holding its sealed secrets. */
export const SEALED_FIELD = '$sealed'
const VERSION = 'v1'
const CONTEXT = 'dutil sealed input v1\0'

/** A job's own sealing key (32 bytes), from the installation's key: one job's key opens no other job's secrets. */
export function jobSealKey(installationKey: Buffer, jobId: string): Buffer {
  return createHmac('sha256', installationKey)
    .update(CONTEXT + jobId)
    .digest()
}

/** An installation's sealing key from its stored form (base64 of 32 bytes or more). */
export function installationKeyOf(stored: string): Buffer {
  const key = Buffer.from(stored, 'base64')
  if (key.length < 32) throw new Error('the input sealing key is shorter than 32 bytes')
  return key
}

/** A new installation key's stored form. */
export function newInstallationKey(): string {
  return randomBytes(32).toString('base64')
}

/** A text sealed with a job's key, bound to its id (pure but for the nonce). */
function sealText(text: string, key: Buffer, jobId: string): string {
  const nonce = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  cipher.setAAD(Buffer.from(jobId, 'utf8'))
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return `${VERSION}.${nonce.toString('base64url')}.${body.toString('base64url')}`
}

/** The job's secrets sealed (pure but for the nonce). */
export function seal(secrets: Record<string, string>, key: Buffer, jobId: string): string {
  return sealText(JSON.stringify(secrets), key, jobId)
}

/** Why sealed secrets could not be opened: no key, another job's, or changed. */
export class SealBroken extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SealBroken'
  }
}

/** The text `sealed` holds, or SealBroken. */
function openText(sealed: unknown, key: Buffer, jobId: string, what: string): string {
  const parts = typeof sealed === 'string' ? sealed.split('.') : []
  if (parts.length !== 3 || parts[0] !== VERSION) throw new SealBroken(`the sealed ${what} is not in a known form`)
  const nonce = Buffer.from(parts[1]!, 'base64url')
  const body = Buffer.from(parts[2]!, 'base64url')
  if (nonce.length !== 12 || body.length < 16) throw new SealBroken(`the sealed ${what} is not in a known form`)
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce)
    decipher.setAAD(Buffer.from(jobId, 'utf8'))
    decipher.setAuthTag(body.subarray(body.length - 16))
    return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8')
  } catch {
    throw new SealBroken(`the sealed ${what} does not open with this job's key`)
  }
}

/** The secrets `sealed` holds, or SealBroken. */
export function unseal(sealed: unknown, key: Buffer, jobId: string): Record<string, string> {
  const value = JSON.parse(openText(sealed, key, jobId, 'secrets')) as unknown
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new SealBroken('the sealed secrets are not a map')
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v
  return out
}

/**
 * A whole stored input, as its JSON text, sealed with the job's key (docs/adr/0043): the form in
 * which a small input rides with its job (the UtilityJob's `sealedInput`, the job's row, the
 * runner's hand-over).
 */
export function sealDocument(json: string, key: Buffer, jobId: string): string {
  return sealText(json, key, jobId)
}

/** The stored input a {@link sealDocument} holds, or SealBroken. */
export function openDocument(sealed: string, key: Buffer | undefined, jobId: string): unknown {
  if (!key) throw new SealBroken('the job carries its input sealed and its runner was given no key to open it')
  const text = openText(sealed, key, jobId, 'input')
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new SealBroken('the sealed input is not JSON')
  }
}

/**
 * The input as it is stored: its secrets taken out and sealed into SEALED_FIELD with the job's
 * own key (made from `installationKey`, asked for only when there are secrets). `sealed` says
 * whether it held any (an input without secrets is stored as it came).
 */
export async function sealInput(
  input: unknown,
  paths: readonly SecretPath[],
  installationKey: () => Promise<Buffer>,
  jobId: string,
): Promise<{ stored: unknown; sealed: boolean }> {
  const { rest, secrets } = splitSecrets(input, paths)
  if (!secrets) return { stored: input, sealed: false }
  const key = jobSealKey(await installationKey(), jobId)
  return { stored: { ...(rest as object), [SEALED_FIELD]: seal(secrets, key, jobId) }, sealed: true }
}

/** Whether a stored input holds sealed secrets. */
export function isSealed(stored: unknown): boolean {
  return typeof stored === 'object' && stored !== null && SEALED_FIELD in stored
}

/** The input a stored one was made from: its sealed secrets opened and put back (SealBroken without the key). */
export function openInput(stored: unknown, key: Buffer | undefined, jobId: string): unknown {
  if (!isSealed(stored)) return stored
  const { [SEALED_FIELD]: sealed, ...rest } = stored as Record<string, unknown>
  if (!key) throw new SealBroken('the job holds sealed secrets and its runner was given no key to open them')
  return joinSecrets(rest, unseal(sealed, key, jobId))
}
