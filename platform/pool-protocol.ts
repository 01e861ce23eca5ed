import {
  type PoolAssignment,
  type PoolJobState,
  runnerFailureOf,
  SEALED_INPUT_MAX_CHARS,
} from '../contract/runner-protocol.js'
import { JsonBoundError, parseBoundedJson } from './bounded-json.js'

/**
 * Reading the two documents of pool mode's HTTP interface (POOL in contract/runner-protocol.ts):
 * the runner reads an assignment, the operator a job's state. Both sides bound the size first.
 */

const ID = /^[A-Za-z0-9_-]{1,64}$/

/** The assignment in a request body, or what is wrong with it (pure; the body is size-bounded already). */
export function parseAssignment(text: string): PoolAssignment | string {
  let v: unknown
  try {
    v = parseBoundedJson(text)
  } catch (err) {
    return (err as JsonBoundError).bound === 'depth' ? 'the assignment nests too deep' : 'the assignment is not JSON'
  }
  const a = v as Partial<PoolAssignment> | null
  if (!a || typeof a !== 'object') return 'the assignment is not an object'
  if (typeof a.jobId !== 'string' || !ID.test(a.jobId)) return 'jobId is missing or malformed'
  if (typeof a.utility !== 'string' || !ID.test(a.utility)) return 'utility is missing or malformed'
  if (typeof a.createdAt !== 'string' || Number.isNaN(Date.parse(a.createdAt))) return 'createdAt is not a timestamp'
  if (typeof a.tenant !== 'string' || !ID.test(a.tenant)) return 'tenant is missing or malformed'
  if (!Number.isInteger(a.deadlineSeconds) || a.deadlineSeconds! < 1) return 'deadlineSeconds is not a whole number'
  if (
    a.sealedInput !== undefined &&
    (typeof a.sealedInput !== 'string' || a.sealedInput.length > SEALED_INPUT_MAX_CHARS)
  )
    return 'sealedInput is not a sealed input'
  const c = a.credentials
  if (!c || typeof c.accessKey !== 'string' || typeof c.secretKey !== 'string' || typeof c.sessionToken !== 'string')
    return 'credentials are missing'
  return {
    jobId: a.jobId,
    utility: a.utility,
    createdAt: a.createdAt,
    tenant: a.tenant,
    deadlineSeconds: a.deadlineSeconds!,
    credentials: {
      accessKey: c.accessKey,
      secretKey: c.secretKey,
      sessionToken: c.sessionToken,
      expiresAt: typeof c.expiresAt === 'string' ? c.expiresAt : '',
      ...(typeof c.sealKey === 'string' && c.sealKey ? { sealKey: c.sealKey } : {}),
    },
    ...(a.sealedInput !== undefined ? { sealedInput: a.sealedInput } : {}),
  }
}

/** The job's state as the runner reports it, or null when the text is not one (pure; for the operator). */
export function parseJobState(text: string): PoolJobState | null {
  let v: Partial<PoolJobState>
  try {
    v = parseBoundedJson(text) as Partial<PoolJobState>
  } catch {
    return null
  }
  if (typeof v?.jobId !== 'string' || !['running', 'succeeded', 'failed'].includes(v.state ?? '')) return null
  if (v.state === 'succeeded' && v.result !== undefined) return { jobId: v.jobId, state: 'succeeded', result: v.result }
  if (v.state !== 'failed') return { jobId: v.jobId, state: v.state! }
  const failure = runnerFailureOf(v.failure)
  return failure ? { jobId: v.jobId, state: 'failed', failure } : null
}
