import type { V1Pod } from '@kubernetes/client-node'
import { POOL, type PoolAssignment, type PoolJobState } from '../contract/runner-protocol.js'
import { parseJobState } from '../platform/pool-protocol.js'
import { poolToken } from './pool-pod.js'

/** What a pool pod said to an assignment: `retired` means it takes no job again. */
export type AssignAnswer = 'taken' | 'busy' | 'retired' | 'unreachable'

/** The operator's side of the pool runner's HTTP interface (POOL in contract/runner-protocol.ts). */
export interface PoolClient {
  /** Hands the job to the pod; `taken` also when the pod had it already. */
  assign(pod: V1Pod, a: PoolAssignment): Promise<AssignAnswer>
  /**
   * The job's state as the pod tells it: `unknown` when the pod never took it. With `waitMs`, a
   * running job's answer comes when it ends, or after that long (at most POOL.maxWaitMs).
   */
  state(pod: V1Pod, jobId: string, waitMs?: number): Promise<PoolJobState | 'unknown' | 'unreachable'>
}

/** Reads at most `max` bytes of a response body: a pod that ran hostile input may be hostile. */
async function boundedText(res: Response, max: number): Promise<string | null> {
  const reader = res.body?.getReader()
  if (!reader) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > max) {
      await reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

export function httpPoolClient(timeoutMs = 3_000, port: number = POOL.port): PoolClient {
  const call = async (pod: V1Pod, path: string, init: RequestInit = {}, waitMs = 0) => {
    const ip = pod.status?.podIP
    const token = poolToken(pod)
    if (!ip || !token) return null
    const host = ip.includes(':') ? `[${ip}]` : ip
    try {
      return await fetch(`http://${host}:${port}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        signal: AbortSignal.timeout(timeoutMs + waitMs),
        redirect: 'error',
      })
    } catch {
      return null
    }
  }
  return {
    async assign(pod, a) {
      const res = await call(pod, '/jobs', { method: 'POST', body: JSON.stringify(a) })
      if (!res) return 'unreachable'
      await boundedText(res, POOL.maxStateBytes).catch(() => null)
      if (res.status === 202 || res.status === 200) return 'taken'
      if (res.status === 410) return 'retired'
      return res.status === 409 || res.status === 503 ? 'busy' : 'unreachable'
    },
    async state(pod, jobId, waitMs = 0) {
      const wait = Math.min(Math.max(0, Math.round(waitMs)), POOL.maxWaitMs)
      const res = await call(pod, `/jobs/${encodeURIComponent(jobId)}${wait ? `?waitMs=${wait}` : ''}`, {}, wait)
      if (!res) return 'unreachable'
      const text = await boundedText(res, POOL.maxStateBytes).catch(() => null)
      if (res.status === 404) return 'unknown'
      if (res.status !== 200 || text === null) return 'unreachable'
      const state = parseJobState(text)
      return state && state.jobId === jobId ? state : 'unreachable'
    },
  }
}
