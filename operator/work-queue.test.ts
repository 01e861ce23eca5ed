import { describe, expect, it } from 'vitest'
import { WorkQueue } from './work-queue.js'

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms))

describe('WorkQueue', () => {
  it('hands a key queued many times to a worker once', async () => {
    const q = new WorkQueue()
    const seen: string[] = []
    q.add('a')
    q.add('a')
    q.add('b')
    const running = q.run(
      async (k) => void seen.push(k),
      2,
      () => {},
    )
    await tick()
    q.stop()
    await running
    expect(seen.sort()).toEqual(['a', 'b'])
  })

  it('never runs one key on two workers, and reruns a key re-added while it ran', async () => {
    const q = new WorkQueue()
    let active = 0
    let maxActive = 0
    let runs = 0
    const running = q.run(
      async () => {
        active++
        maxActive = Math.max(maxActive, active)
        runs++
        if (runs === 1) q.add('k')
        await tick(10)
        active--
      },
      4,
      () => {},
    )
    q.add('k')
    await tick(60)
    q.stop()
    await running
    expect(maxActive).toBe(1)
    expect(runs).toBe(2)
  })

  it('retries a failing key with growing delays, then forgets the failures after success', async () => {
    const q = new WorkQueue({ baseDelayMs: 10 })
    const delays: number[] = []
    let calls = 0
    const running = q.run(
      async () => {
        calls++
        if (calls < 3) throw new Error('boom')
      },
      1,
      (_k, _e, retryIn) => delays.push(retryIn),
    )
    q.add('x')
    await tick(80)
    q.stop()
    await running
    expect(calls).toBe(3)
    expect(delays).toEqual([10, 20])
  })

  it('schedules a later look when the worker asks for one', async () => {
    const q = new WorkQueue()
    let calls = 0
    const running = q.run(
      async () => (++calls === 1 ? { requeueAfterMs: 20 } : undefined),
      1,
      () => {},
    )
    q.add('y')
    await tick(5)
    expect(calls).toBe(1)
    await tick(40)
    q.stop()
    await running
    expect(calls).toBe(2)
  })
})
