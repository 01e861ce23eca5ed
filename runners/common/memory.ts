/**
 * A young-generation collection, when the runner was started with --expose-gc (its catalog entry's
 * nodeFlags); otherwise nothing.
 *
 * Streaming runners allocate a buffer per network read and per deflated piece, and drop each at
 * once, but V8 frees a dropped buffer's memory only when it collects the small JS object that
 * owns it. Those objects are few, so collections are rare, and V8 lets up to ~64 MB of dead
 * buffers pile up before memory pressure forces one: a zip of 4 × 50 MB peaked at 100 MB resident
 * against 78 MB with a collection every few megabytes (make bench, docs/benchmarks.md). A minor
 * collection of a 1 MB young generation takes well under a millisecond.
 */
const gc = (globalThis as { gc?: (options: { type: 'minor' | 'major' }) => void }).gc

export function collectYoung(): void {
  gc?.({ type: 'minor' })
}

/** Calls collectYoung() once every `bytes` counted. */
export function everyBytes(bytes: number): (n: number) => void {
  let since = 0
  return (n) => {
    since += n
    if (since >= bytes) {
      since = 0
      collectYoung()
    }
  }
}
