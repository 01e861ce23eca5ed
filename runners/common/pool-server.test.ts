import pino from 'pino'
import { describe, expect, it, vi } from 'vitest'
import type { PoolAssignment } from '../../contract/runner-protocol.js'
import { needsFreshStart, PoolRunner, type PoolSettings, type PoolWorker } from './pool-server.js'
import type { JobOutcome } from './run-utility.js'

const assignment = (over: Partial<PoolAssignment> = {}): PoolAssignment => ({
  jobId: 'job_01',
  utility: 'html-pdf',
  createdAt: '2026-11-26T10:00:00.000Z',
  tenant: 'tenant-a',
  deadlineSeconds: 60,
  credentials: { accessKey: 'a', secretKey: 's', sessionToken: 't', expiresAt: '' },
  ...over,
})

const settings: PoolSettings = {
  token: 'x'.repeat(32),
  port: 0,
  restartEvery: 3,
  base: {
    outbound: { allowLoopback: false, allowedNetworks: [] } as never,
    terminationMessagePath: '/dev/null',
    storage: { endpoint: 'http://storage', region: 'us-east-1', bucket: 'b' },
  },
}

/** A worker whose runs end when the test says, recording each prepare's `fresh`. */
function fakeWorker() {
  const prepared: boolean[] = []
  const runs: Array<{ jobId: string; accessKey: string; finish(o: JobOutcome): void }> = []
  let aborted = 0
  const worker: PoolWorker = {
    prepare: async (fresh) => void prepared.push(fresh),
    run: (config) =>
      new Promise<JobOutcome>((finish) =>
        runs.push({ jobId: config.jobId, accessKey: config.storage.accessKey, finish }),
      ),
    abort: () => {
      aborted++
      runs.at(-1)?.finish({ ok: false, failure: { code: 'upstream_error', message: 'killed' }, exitCode: 1 })
    },
  }
  return { worker, prepared, runs, aborted: () => aborted }
}

const settle = () => new Promise((r) => setTimeout(r, 0))

describe('needsFreshStart', () => {
  const warm = { tenant: 'a', jobs: 1, usable: true }
  it('keeps the warm state for the same tenant under the restart count', () => {
    expect(needsFreshStart(warm, 'a', 3)).toBe(false)
    expect(needsFreshStart({ ...warm, tenant: null, jobs: 0 }, 'b', 3)).toBe(false)
  })
  it('starts afresh for another tenant, at the restart count, and when unusable', () => {
    expect(needsFreshStart(warm, 'b', 3)).toBe(true)
    expect(needsFreshStart({ ...warm, jobs: 3 }, 'a', 3)).toBe(true)
    expect(needsFreshStart({ ...warm, usable: false }, 'a', 3)).toBe(true)
  })
})

describe('PoolRunner', () => {
  const log = pino({ level: 'silent' })

  it('takes one job at a time, with the assignment’s credentials, and keeps its outcome', async () => {
    const f = fakeWorker()
    const r = new PoolRunner(f.worker, settings, log)
    expect(r.take(assignment())).toEqual({ taken: false, why: 'starting' })
    await r.start()
    expect(r.take(assignment())).toEqual({ taken: true })
    expect(r.take(assignment())).toEqual({ taken: false, why: 'known' })
    expect(r.take(assignment({ jobId: 'job_02' }))).toEqual({ taken: false, why: 'busy' })
    await settle()
    expect(r.state('job_01')).toEqual({ jobId: 'job_01', state: 'running' })
    expect(f.runs[0].accessKey).toBe('a')
    f.runs[0].finish({ ok: true })
    await settle()
    expect(r.state('job_01')).toEqual({ jobId: 'job_01', state: 'succeeded' })
    expect(r.health()).toMatchObject({ ready: true, busy: false, jobs: 1 })
  })

  it('starts the warm state afresh for another tenant and after restartEvery jobs of one', async () => {
    const f = fakeWorker()
    const r = new PoolRunner(f.worker, settings, log)
    await r.start()
    const run = async (jobId: string, tenant: string) => {
      r.take(assignment({ jobId, tenant }))
      await settle()
      f.runs.at(-1)!.finish({ ok: true })
      await settle()
    }
    await run('j1', 'a')
    await run('j2', 'a')
    await run('j3', 'b') // another tenant
    await run('j4', 'b')
    await run('j5', 'b')
    await run('j6', 'b') // the fourth since the start: restartEvery is 3
    // start(), then one prepare per job.
    expect(f.prepared).toEqual([true, false, false, true, false, false, true])
  })

  it('fails a job at its deadline, aborts it, and starts afresh for the next', async () => {
    vi.useFakeTimers()
    try {
      const f = fakeWorker()
      const exit = vi.fn()
      const r = new PoolRunner(f.worker, settings, log, exit)
      await r.start()
      r.take(assignment({ deadlineSeconds: 5 }))
      await vi.advanceTimersByTimeAsync(5_000)
      expect(f.aborted()).toBe(1)
      expect(r.state('job_01')).toEqual({
        jobId: 'job_01',
        state: 'failed',
        failure: { code: 'upstream_timeout', message: 'The utility did not finish within its time limit of 5 s.' },
      })
      expect(r.health().busy).toBe(false)
      r.take(assignment({ jobId: 'job_02' }))
      await vi.advanceTimersByTimeAsync(0)
      expect(f.prepared.at(-1)).toBe(true)
      await vi.advanceTimersByTimeAsync(20_000)
      expect(exit).not.toHaveBeenCalled()
    } finally {
      vi.useRealTimers()
    }
  })

  it('exits when an aborted job does not stop', async () => {
    vi.useFakeTimers()
    try {
      const f = fakeWorker()
      f.worker.abort = () => {} // the run never ends
      const exit = vi.fn()
      const r = new PoolRunner(f.worker, settings, log, exit)
      await r.start()
      r.take(assignment({ deadlineSeconds: 1 }))
      await vi.advanceTimersByTimeAsync(1_000)
      expect(r.health().busy).toBe(true)
      await vi.advanceTimersByTimeAsync(10_000)
      expect(exit).toHaveBeenCalledWith(1)
    } finally {
      vi.useRealTimers()
    }
  })
})
