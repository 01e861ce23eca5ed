/**
 * The `p`th percentile (0–100) of `xs` by the nearest-rank rule on a sorted copy (NaN for none):
 * what every bench prints as p50, p90, p99.
 */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN
  return [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
}
