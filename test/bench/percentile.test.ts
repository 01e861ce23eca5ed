import { describe, expect, it } from 'vitest'
import { percentile } from './percentile.js'

describe('percentile', () => {
  it('takes the nearest rank of a sorted copy, leaving the input as it was', () => {
    const xs = [50, 10, 40, 20, 30, 60, 70, 80, 90, 100]
    expect(percentile(xs, 50)).toBe(60)
    expect(percentile(xs, 90)).toBe(100)
    expect(percentile(xs, 99)).toBe(100)
    expect(percentile(xs, 0)).toBe(10)
    expect(xs[0]).toBe(50)
  })

  it('is NaN for no values', () => {
    expect(percentile([], 50)).toBeNaN()
  })
})
