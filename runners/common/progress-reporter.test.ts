import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { RunnerProgress } from '../../contract/runner-protocol.js'
import { ProgressReporter } from './progress-reporter.js'

describe('ProgressReporter', () => {
  beforeEach(() => vi.useFakeTimers({ now: Date.parse('2026-11-24T10:00:00.000Z') }))
  afterEach(() => vi.useRealTimers())

  it('writes the first report at once, then at most one per interval, always the newest', async () => {
    const written: RunnerProgress[] = []
    const r = new ProgressReporter(async (p) => void written.push(p), { intervalMs: 1000 })
    r.report(0, 500)
    await vi.advanceTimersByTimeAsync(0)
    expect(written).toEqual([{ done: 0, total: 500, at: '2026-11-24T10:00:00.000Z' }])
    for (let i = 1; i <= 40; i++) {
      await vi.advanceTimersByTimeAsync(50)
      r.report(i * 10, 500)
    }
    // 2 s of reports every 50 ms: two more writes, each the newest value at its time.
    await vi.advanceTimersByTimeAsync(0)
    expect(written.map((p) => p.done)).toEqual([0, 190, 390])
    expect(written[1].at).toBe('2026-11-24T10:00:00.950Z')
    // The newest report, written or not, for the result manifest.
    expect(r.last).toMatchObject({ done: 400, total: 500 })
  })

  it('writes nothing before firstAfterMs, then the newest report', async () => {
    const written: RunnerProgress[] = []
    const r = new ProgressReporter(async (p) => void written.push(p), { intervalMs: 1000, firstAfterMs: 1000 })
    r.report(0, 10)
    await vi.advanceTimersByTimeAsync(400)
    r.report(4, 10)
    await vi.advanceTimersByTimeAsync(500)
    expect(written).toEqual([])
    expect(r.wrote).toBe(false)
    await vi.advanceTimersByTimeAsync(100)
    expect(written).toEqual([{ done: 4, total: 10, at: '2026-11-24T10:00:00.400Z' }])
    expect(r.wrote).toBe(true)
    // A job over before then writes none: its result carries its progress.
    const short: RunnerProgress[] = []
    const s = new ProgressReporter(async (p) => void short.push(p), { intervalMs: 1000, firstAfterMs: 1000 })
    s.report(0, 10)
    await vi.advanceTimersByTimeAsync(300)
    s.report(10, 10)
    await s.stop()
    await vi.advanceTimersByTimeAsync(2000)
    expect(short).toEqual([])
    expect(s.wrote).toBe(false)
    expect(s.last).toMatchObject({ done: 10, total: 10 })
  })

  it('never has two writes in flight, and drops a failed one', async () => {
    let inFlight = 0
    let most = 0
    const done: number[] = []
    const r = new ProgressReporter(
      async (p) => {
        most = Math.max(most, ++inFlight)
        await new Promise((resolve) => setTimeout(resolve, 3000)) // storage slower than the interval
        inFlight--
        if (p.done === 2) throw new Error('storage away')
        done.push(p.done)
      },
      { intervalMs: 1000 },
    )
    r.report(1, null)
    await vi.advanceTimersByTimeAsync(1500)
    r.report(2, null)
    await vi.advanceTimersByTimeAsync(3000)
    r.report(3, null)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(most).toBe(1)
    expect(done).toEqual([1, 3])
  })

  it('writes nothing after stop, which waits for the write in flight', async () => {
    const written: number[] = []
    const r = new ProgressReporter(
      async (p) => {
        await new Promise((resolve) => setTimeout(resolve, 500))
        written.push(p.done)
      },
      { intervalMs: 1000 },
    )
    r.report(1, 2)
    await vi.advanceTimersByTimeAsync(100)
    r.report(2, 2)
    let stopped = false
    const stopping = r.stop().then(() => (stopped = true))
    r.report(3, 2)
    await vi.advanceTimersByTimeAsync(300)
    expect(stopped).toBe(false) // the first write is still in flight
    await vi.advanceTimersByTimeAsync(200)
    await stopping
    await vi.advanceTimersByTimeAsync(5000)
    expect(written).toEqual([1])
  })
})
