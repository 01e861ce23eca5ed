import { Algorithm, hash, verify } from '@node-rs/argon2'
import { ApiError } from '../api-error.js'
import { ConcurrencyGate, GateFullError } from '../concurrency-gate.js'

/** The console's minimum (README: Console); the longest accepted keeps hashing cheap to ask for. */
export const PASSWORD_LIMITS = { minLength: 10, maxLength: 200 } as const

/**
 * argon2id with OWASP's current baseline (Password Storage Cheat Sheet): 19 MiB of memory,
 * two iterations, one lane. The parameters are stored in the hash, so raising them later
 * only applies to new hashes (see needsRehash).
 */
export const ARGON2_PARAMS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

export function passwordProblem(password: unknown): string | null {
  if (typeof password !== 'string') return 'is required'
  if ([...password].length < PASSWORD_LIMITS.minLength)
    return `must be at least ${PASSWORD_LIMITS.minLength} characters`
  if (password.length > PASSWORD_LIMITS.maxLength) return `must be at most ${PASSWORD_LIMITS.maxLength} characters`
  return null
}

/**
 * Every argon2 hash and verification passes one gate: each costs ~19 MiB and tens of
 * milliseconds of a core, and sign-in is open to anyone, so only a few run at once and a
 * bounded number wait; the rest are told to retry (429 with Retry-After) at once.
 */
let gate = new ConcurrencyGate(2, 64)

/** Sets the gate from the settings, once at start. */
export function limitPasswordWork(concurrency: number, maxQueued: number): void {
  gate = new ConcurrencyGate(concurrency, maxQueued)
}

async function gated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await gate.run(work)
  } catch (err) {
    if (err instanceof GateFullError) {
      throw new ApiError(
        'rate_limited',
        'Too many sign-ins are being checked right now; try again in a moment.',
        undefined,
        { 'Retry-After': String(err.retryAfterSeconds) },
      )
    }
    throw err
  }
}

export function hashPassword(password: string): Promise<string> {
  return gated(() => hash(password, ARGON2_PARAMS))
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  return gated(async () => {
    try {
      return await verify(stored, password)
    } catch {
      return false
    }
  })
}

/** A hash made once at start, verified against when an address has no account (same timing). */
let dummy: Promise<string> | undefined
export async function burnVerification(password: string): Promise<void> {
  dummy ??= hash('dutil-no-such-account', ARGON2_PARAMS)
  await verifyPassword(await dummy, password)
}

/** Whether a stored hash was made with weaker parameters than today's. */
export function needsRehash(stored: string): boolean {
  const m = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(stored)
  if (!m) return true
  return Number(m[1]) < ARGON2_PARAMS.memoryCost || Number(m[2]) < ARGON2_PARAMS.timeCost
}
