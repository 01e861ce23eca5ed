import { describe, expect, it } from 'vitest'
import { mapBounded } from './bounded.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('mapBounded', () => {
  it('keeps order, never runs more than the limit, and pulls lazily', async () => {
    let inFlight = 0
    let max = 0
    let pulled = 0
    async function* items() {
      for (let i = 0; i < 20; i++) {
        pulled++
        // The producer is never more than limit (+1 being handed over) ahead of completed work.
        expect(pulled - done).toBeLessThanOrEqual(4)
        yield i
      }
    }
    let done = 0
    const out = await mapBounded(items(), 3, async (x) => {
      inFlight++
      max = Math.max(max, inFlight)
      await sleep(5 + ((x * 7) % 5))
      inFlight--
      done++
      return x * 2
    })
    expect(out).toEqual(Array.from({ length: 20 }, (_, i) => i * 2))
    expect(max).toBe(3)
  })

  it('stops at the first failure and throws it', async () => {
    let started = 0
    await expect(
      mapBounded([1, 2, 3, 4, 5, 6, 7, 8], 2, async (x) => {
        started++
        await sleep(2)
        if (x === 3) throw new Error('three')
        return x
      }),
    ).rejects.toThrow('three')
    expect(started).toBeLessThan(8)
  })
})
