import pino from 'pino'
import { describe, expect, it, vi } from 'vitest'
import { poolAssignment } from '../../test/support/pool-assignment.js'
import { pickWarmState, PoolRunner, type PoolSettings, type PoolWorker, type WarmState } from './pool-server.js'
import type { JobOutcome } from './run-utility.js'

const assignment = poolAssignment

const settings: PoolSettings = {
  token: 'x'.repeat(32),
  port: 0,
  restartEvery: 3,
  warmSlots: 1,
  base: {
    outbound: { allowLoopback: false, allowedNetworks: [] } as never,
    terminationMessagePath: '/dev/null',
    storage: { endpoint: 'http://storage', region: 'us-east-1', bucket: 'b' },
  },
}

/** A worker whose runs end when the test says, recording each start's slot. */
function fakeWorker() {
  const started: number[] = []
  const runs: Array<{ jobId: string; slot: number; accessKey: string; finish(o: JobOutcome): void }> = []
  let aborted = 0
  const worker: PoolWorker = {
    start: async (slot) => void started.push(slot),
    run: (slot, config) =>
      new Promise<JobOutcome>((finish) =>
        runs.push({ jobId: config.jobId, slot, accessKey: config.storage.accessKey, finish }),
      ),
    abort: () => {
      aborted++
      runs.at(-1)?.finish({ ok: false, failure: { code: 'upstream_error', message: 'killed' }, exitCode: 1 })
    },
  }
  return { worker, started, runs, aborted: () => aborted }
}

const settle = () => new Promise((r) => setTimeout(r, 0))

describe('pickWarmState', () => {
  const w = (tenant: string | null, jobs: number, lastUsed: number, usable = true): WarmState => ({
    tenant,
    jobs,
    usable,
    lastUsed,
  })
  it("keeps the tenant's own warm state under the restart count, or one that served nobody yet", () => {
    expect(pickWarmState([w('b', 1, 1), w('a', 1, 2)], 'a', 3)).toEqual({ slot: 1, fresh: null })
    expect(pickWarmState([w(null, 0, 0)], 'a', 3)).toEqual({ slot: 0, fresh: null })
  })
  it('starts afresh at the restart count, when unusable, a slot never started, and the least recent for another tenant', () => {
    expect(pickWarmState([w('a', 3, 1)], 'a', 3)).toEqual({ slot: 0, fresh: 'jobs' })
    expect(pickWarmState([w('a', 1, 1, false)], 'a', 3)).toEqual({ slot: 0, fresh: 'unusable' })
    expect(pickWarmState([w('b', 1, 1), w(null, 0, 0, false)], 'a', 3)).toEqual({ slot: 1, fresh: 'first' })
    expect(pickWarmState([w('b', 1, 5), w('c', 1, 2)], 'a', 3)).toEqual({ slot: 1, fresh: 'tenant' })
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
    expect(f.runs[0]).toMatchObject({ accessKey: 'a', slot: 0 })
    f.runs[0].finish({ ok: true })
    await settle()
    expect(r.state('job_01')).toEqual({ jobId: 'job_01', state: 'succeeded' })
    expect(r.health()).toMatchObject({ ready: true, busy: false, jobs: 1 })
  })

  it('starts a warm state afresh for another tenant and after restartEvery jobs of one; with two, keeps two tenants warm', async () => {
    const run = async (r: PoolRunner, f: ReturnType<typeof fakeWorker>, jobId: string, tenant: string) => {
      r.take(assignment({ jobId, tenant }))
      await settle()
      f.runs.at(-1)!.finish({ ok: true })
      await settle()
    }
    const one = fakeWorker()
    const r1 = new PoolRunner(one.worker, settings, log)
    await r1.start()
    for (const [job, tenant] of [
      ['j1', 'a'],
      ['j2', 'a'],
      ['j3', 'b'],
      ['j4', 'b'],
      ['j5', 'b'],
      ['j6', 'b'],
      ['j7', 'a'],
    ])
      await run(r1, one, job, tenant)
    // start(); then afresh for b (j3), after three of b's (j6), and for a again (j7).
    expect(one.started).toEqual([0, 0, 0, 0])
    const two = fakeWorker()
    const r2 = new PoolRunner(two.worker, { ...settings, warmSlots: 2 }, log)
    await r2.start()
    for (const [job, tenant] of [
      ['j1', 'a'],
      ['j2', 'b'],
      ['j3', 'a'],
      ['j4', 'b'],
      ['j5', 'c'],
      ['j6', 'b'],
    ])
      await run(r2, two, job, tenant)
    // start() warms slot 0; b's first job starts slot 1; c takes the least recent (a's, slot 0).
    expect(two.started).toEqual([0, 1, 0])
    expect(two.runs.map((r) => r.slot)).toEqual([0, 1, 0, 1, 0, 1])
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
      expect(f.started).toEqual([0, 0])
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
