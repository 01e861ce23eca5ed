import { describe, expect, it } from 'vitest'
import { CALLBACK_SCHEDULE, retryDelayMs, scaledSchedule } from './schedule.js'

describe('callback schedule', () => {
  it('is 8 attempts, first retry after 10 s, doubling: about 21 minutes in all', () => {
    const delays = Array.from({ length: 8 }, (_, i) => retryDelayMs(i + 1))
    expect(delays).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, null])
    const total = delays.reduce<number>((sum, d) => sum + (d ?? 0), 0)
    expect(total).toBe(1_270_000)
    expect(total / 60_000).toBeCloseTo(21.2, 1)
  })

  it('gives each attempt 10 s to answer', () => {
    expect(CALLBACK_SCHEDULE.timeoutMs).toBe(10_000)
  })

  it('has no delay before the first attempt and none after the eighth', () => {
    expect(retryDelayMs(0)).toBe(0)
    expect(retryDelayMs(8)).toBeNull()
    expect(retryDelayMs(9)).toBeNull()
  })

  it('scales the back-off (not the timeout) for tests', () => {
    const fast = scaledSchedule(0.01)
    expect([1, 2, 7].map((n) => retryDelayMs(n, fast))).toEqual([100, 200, 6400])
    expect(fast.timeoutMs).toBe(10_000)
    expect(fast.maxAttempts).toBe(8)
    expect(scaledSchedule(1)).toEqual(CALLBACK_SCHEDULE)
    expect(() => scaledSchedule(0)).toThrow()
    expect(() => scaledSchedule(2)).toThrow()
    expect(() => scaledSchedule(Number.NaN)).toThrow()
  })
})
