import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { poolAssignment, poolSettings } from '../../test/support/pool-assignment.js'
import { PoolRunner, type PoolSettings, type PoolWorker } from './pool-runner.js'
import type { JobOutcome } from './run-utility.js'
import type { ProcessEntry } from './stray-processes.js'

const assignment = poolAssignment

const settings = poolSettings()

/** A worker whose runs end when the test says. */
function fakeWorker() {
  let started = 0
  const runs: Array<{
    jobId: string
    accessKey: string
    scratchDir: string
    answerResult?: boolean
    finish(o: JobOutcome): void
  }> = []
  let aborted = 0
  const worker: PoolWorker = {
    start: async () => void started++,
    run: (config) =>
      new Promise<JobOutcome>((finish) =>
        runs.push({
          jobId: config.jobId,
          accessKey: config.storage.accessKey,
          scratchDir: config.scratchDir,
          answerResult: config.answerResult,
          finish,
        }),
      ),
    abort: () => {
      aborted++
      runs.at(-1)?.finish({ ok: false, failure: { code: 'upstream_error', message: 'killed' }, exitCode: 1 })
    },
    kept: () => [],
    between: () => void betweens++,
  }
  let betweens = 0
  return { worker, runs, started: () => started, aborted: () => aborted, betweens: () => betweens }
}

describe('PoolRunner', () => {
  const log = pino({ level: 'silent' })
  beforeEach(() => void vi.useFakeTimers())
  afterEach(() => void vi.useRealTimers())
  const settle = () => vi.advanceTimersByTimeAsync(0)
  /** Scratch directories by name, made and removed in memory. */
  function scratchDirs() {
    const live = new Set<string>()
    let n = 0
    return {
      live,
      make: async () => {
        const dir = `job-${++n}`
        live.add(dir)
        return dir
      },
      remove: async (dir: string) => void live.delete(dir),
    }
  }

  /** A started runner, its fake worker, and the exits it asked for. */
  async function runner(o: { strays?: () => ProcessEntry[]; settings?: Partial<PoolSettings> } = {}) {
    const f = fakeWorker()
    const exit = vi.fn()
    const r = new PoolRunner(f.worker, { ...settings, ...o.settings }, log, {
      exit,
      strays: o.strays,
      scratch: scratchDirs(),
    })
    await r.start()
    return { r, f, exit }
  }

  /** Runs one job to the outcome given and reads its state, as the operator does. */
  async function runOne(
    r: PoolRunner,
    f: ReturnType<typeof fakeWorker>,
    jobId: string,
    tenant = 'tenant-a',
    outcome: JobOutcome = { ok: true },
  ) {
    expect(r.take(assignment({ jobId, tenant }))).toEqual({ taken: true })
    await settle()
    f.runs.at(-1)!.finish(outcome)
    await settle()
    return r.state(jobId)
  }

  it('answers a wait for a running job when it ends, or when the wait is over', async () => {
    const { r, f } = await runner()
    expect(r.take(assignment({ jobId: 'job_w' }))).toEqual({ taken: true })
    await settle()
    let ended = false
    void r.untilEnded('job_w', 5_000).then(() => (ended = true))
    await vi.advanceTimersByTimeAsync(4_000)
    expect(ended).toBe(false)
    f.runs[0].finish({ ok: true })
    await settle()
    expect(ended).toBe(true)
    expect(r.state('job_w')).toEqual({ jobId: 'job_w', state: 'succeeded' })
    // An ended (or unknown) job: no wait at all.
    await r.untilEnded('job_w', 5_000)
    await r.untilEnded('job_unknown', 5_000)
    // A job still running when the wait is over: the wait ends, the job runs on.
    expect(r.take(assignment({ jobId: 'job_x' }))).toEqual({ taken: true })
    await settle()
    let over = false
    void r.untilEnded('job_x', 1_000).then(() => (over = true))
    await vi.advanceTimersByTimeAsync(1_000)
    expect(over).toBe(true)
    expect(r.state('job_x')).toEqual({ jobId: 'job_x', state: 'running' })
  })

  it('takes one job at a time, with the assignment’s credentials and a scratch directory of its own, and keeps its outcome', async () => {
    const f = fakeWorker()
    const scratch = scratchDirs()
    const r = new PoolRunner(f.worker, settings, log, { exit: vi.fn(), scratch })
    expect(r.take(assignment())).toEqual({ taken: false, why: 'starting' })
    await r.start()
    expect(r.take(assignment())).toEqual({ taken: true })
    expect(r.take(assignment())).toEqual({ taken: false, why: 'known' })
    expect(r.take(assignment({ jobId: 'job_02' }))).toEqual({ taken: false, why: 'busy' })
    await settle()
    expect(r.state('job_01')).toEqual({ jobId: 'job_01', state: 'running' })
    // Its manifest, when small, is answered with its state rather than stored.
    expect(f.runs[0]).toMatchObject({ accessKey: 'a', answerResult: true })
    expect(scratch.live).toEqual(new Set([f.runs[0].scratchDir]))
    f.runs[0].finish({ ok: true })
    await settle()
    expect(scratch.live.size).toBe(0) // removed after the job
    expect(r.state('job_01')).toEqual({ jobId: 'job_01', state: 'succeeded' })
    expect(r.health()).toMatchObject({ ready: true, busy: false, jobs: 1, bound: true })
    // A manifest the run answers rather than stores comes with the state.
    const result = { files: [], extras: {}, startedAt: '2026-11-29T00:00:00.000Z', upstreamMs: 5, storageMs: 1 }
    expect(await runOne(r, f, 'job_02', 'tenant-a', { ok: true, result })).toEqual({
      jobId: 'job_02',
      state: 'succeeded',
      result,
    })
    expect(f.runs[1].scratchDir).not.toBe(f.runs[0].scratchDir)
  })

  it("serves the tenant of its first job alone: another tenant's job is refused and the pod retires", async () => {
    const { r, f, exit } = await runner()
    await runOne(r, f, 'j1', 'tenant-a')
    expect(r.take(assignment({ jobId: 'j2', tenant: 'tenant-b' }))).toEqual({ taken: false, why: 'tenant' })
    expect(f.runs).toHaveLength(1)
    expect(r.health()).toMatchObject({ ready: false, retiring: 'tenant-mismatch' })
    expect(r.take(assignment({ jobId: 'j3', tenant: 'tenant-a' }))).toEqual({ taken: false, why: 'retired' })
    await vi.advanceTimersByTimeAsync(100)
    expect(exit).toHaveBeenCalledWith(0)
  })

  it('lets its worker prepare the next job once an outcome was read, never while a job runs or once retiring', async () => {
    const { r, f } = await runner({ settings: { restartEvery: 2 } })
    expect(r.take(assignment({ jobId: 'job_1' }))).toEqual({ taken: true })
    await settle()
    r.state('job_1') // read while it runs
    expect(f.betweens()).toBe(0)
    f.runs[0].finish({ ok: true })
    await settle()
    expect(f.betweens()).toBe(0) // ended, not yet read
    r.state('job_1')
    r.state('job_1') // read again: nothing more
    expect(f.betweens()).toBe(1)
    await runOne(r, f, 'job_2') // the last of restartEvery: the pod retires
    expect(f.betweens()).toBe(1)
  })

  it('retires after restartEvery jobs, once the last outcome was read', async () => {
    const { r, f, exit } = await runner()
    await runOne(r, f, 'j1')
    await runOne(r, f, 'j2')
    r.take(assignment({ jobId: 'j3' }))
    await settle()
    f.runs.at(-1)!.finish({ ok: true })
    await settle()
    expect(r.health()).toMatchObject({ ready: false, retiring: 'jobs' })
    await vi.advanceTimersByTimeAsync(5_000)
    expect(exit).not.toHaveBeenCalled() // the operator has not read j3's outcome yet
    expect(r.state('j3')).toEqual({ jobId: 'j3', state: 'succeeded' })
    await vi.advanceTimersByTimeAsync(100)
    expect(exit).toHaveBeenCalledWith(0)
  })

  it('exits after a grace period when nobody reads the last outcome', async () => {
    const { r, f, exit } = await runner({ settings: { restartEvery: 1 } })
    r.take(assignment({ jobId: 'j1' }))
    await settle()
    f.runs[0].finish({ ok: true })
    await settle()
    await vi.advanceTimersByTimeAsync(29_000)
    expect(exit).not.toHaveBeenCalled()
    await vi.advanceTimersByTimeAsync(1_100)
    expect(exit).toHaveBeenCalledWith(0)
  })

  it('retires after a crash, and when idle for idleSeconds once bound (a generic pod waits)', async () => {
    const crashed = await runner()
    await runOne(crashed.r, crashed.f, 'j1', 'tenant-a', {
      ok: false,
      failure: { code: 'upstream_error', message: 'The utility failed unexpectedly.' },
      exitCode: 1,
    })
    expect(crashed.r.health().retiring).toBe('crashed')
    const rejected = await runner()
    await runOne(rejected.r, rejected.f, 'j1', 'tenant-a', {
      ok: false,
      failure: { code: 'upstream_rejected', message: 'not a PDF' },
      exitCode: 3,
    })
    expect(rejected.r.health().retiring).toBeNull() // a classified failure is the input's, not the pod's
    const idle = await runner()
    await vi.advanceTimersByTimeAsync(120_000)
    expect(idle.exit).not.toHaveBeenCalled()
    await runOne(idle.r, idle.f, 'j1')
    await vi.advanceTimersByTimeAsync(59_000)
    expect(idle.exit).not.toHaveBeenCalled()
    await vi.advanceTimersByTimeAsync(1_100)
    expect(idle.r.health().retiring).toBe('idle')
    expect(idle.exit).toHaveBeenCalledWith(0)
  })

  it('refuses the next job and retires when a process it did not start is alive', async () => {
    let strays: ProcessEntry[] = []
    const { r, f, exit } = await runner({ strays: () => strays })
    await runOne(r, f, 'j1')
    strays = [{ pid: 77, ppid: 1, command: 'sleep' }]
    expect(r.take(assignment({ jobId: 'j2' }))).toEqual({ taken: false, why: 'retired' })
    expect(f.runs).toHaveLength(1)
    expect(r.health().retiring).toBe('stray-process')
    await vi.advanceTimersByTimeAsync(100)
    expect(exit).toHaveBeenCalledWith(0)
  })

  it('fails a job at its deadline, aborts it, and retires', async () => {
    const { r, f, exit } = await runner()
    r.take(assignment({ deadlineSeconds: 5 }))
    await settle()
    await vi.advanceTimersByTimeAsync(5_000)
    await settle()
    expect(f.aborted()).toBe(1)
    expect(r.state('job_01')).toEqual({
      jobId: 'job_01',
      state: 'failed',
      failure: { code: 'upstream_timeout', message: 'The utility did not finish within its time limit of 5 s.' },
    })
    expect(r.health()).toMatchObject({ busy: false, retiring: 'deadline' })
    expect(r.take(assignment({ jobId: 'job_02' }))).toEqual({ taken: false, why: 'retired' })
    await vi.advanceTimersByTimeAsync(100)
    expect(exit).toHaveBeenCalledWith(0)
  })

  it('fails the job in progress as upstream_error when told to stop, whatever its run then returns, and takes no job again', async () => {
    const { r, f } = await runner()
    expect(r.take(assignment({ jobId: 'job_s' }))).toEqual({ taken: true })
    await settle()
    let told = false
    void r.untilEnded('job_s', 10_000).then(() => (told = true))
    r.stopping()
    await settle()
    expect(told).toBe(true)
    expect(r.state('job_s')).toEqual({
      jobId: 'job_s',
      state: 'failed',
      failure: {
        code: 'upstream_error',
        message: 'The runner stopped before the job finished; submitting it again may succeed.',
      },
    })
    // Stopping its browser made the page fail: not the job's input, and not what the job says.
    f.runs[0].finish({ ok: false, failure: { code: 'upstream_rejected', message: 'page gone' }, exitCode: 10 })
    await settle()
    expect(r.state('job_s')).toMatchObject({ state: 'failed', failure: { code: 'upstream_error' } })
    expect(r.take(assignment({ jobId: 'job_t' }))).toEqual({ taken: false, why: 'retired' })
    expect(r.health()).toMatchObject({ ready: false, retiring: 'stopping' })
  })

  it('exits when an aborted job does not stop', async () => {
    const { r, f, exit } = await runner()
    f.worker.abort = () => {} // the run never ends
    r.take(assignment({ deadlineSeconds: 1 }))
    await settle()
    await vi.advanceTimersByTimeAsync(1_000)
    expect(r.health().busy).toBe(true)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(exit).toHaveBeenCalledWith(1)
  })
})
