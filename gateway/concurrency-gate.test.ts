import { describe, expect, it } from 'vitest'
import { ConcurrencyGate, GateFullError } from './concurrency-gate.js'

const tick = () => new Promise((r) => setImmediate(r))

describe('concurrency gate', () => {
  it('runs at most N at once, queues up to the bound in order, and refuses the rest at once', async () => {
    const gate = new ConcurrencyGate(2, 3)
    let now = 0
    let peak = 0
    const order: number[] = []
    const releases: Array<() => void> = []
    const task = (i: number) => () =>
      new Promise<number>((resolve) => {
        now++
        peak = Math.max(peak, now)
        order.push(i)
        releases.push(() => {
          now--
          resolve(i)
        })
      })
    const results = Array.from({ length: 7 }, (_, i) =>
      gate.run(task(i)).then(
        (v) => ({ ok: v }),
        (e: unknown) => ({ err: e }),
      ),
    )
    await tick()
    expect(gate.inFlight).toBe(2)
    expect(gate.queued).toBe(3)
    while (releases.length) {
      releases.shift()!()
      await tick()
      await tick()
    }
    const settled = await Promise.all(results)
    expect(peak).toBe(2)
    expect(order).toEqual([0, 1, 2, 3, 4])
    expect(settled.slice(0, 5)).toEqual([0, 1, 2, 3, 4].map((ok) => ({ ok })))
    for (const s of settled.slice(5)) expect((s as { err: unknown }).err).toBeInstanceOf(GateFullError)
    expect(gate.inFlight).toBe(0)
  })

  it('frees the slot when a task throws', async () => {
    const gate = new ConcurrencyGate(1, 0)
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(await gate.run(async () => 'next')).toBe('next')
  })
})
