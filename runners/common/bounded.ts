/**
 * Runs `fn` over `items` with at most `limit` calls in flight, pulling items only as slots free
 * up (so a producer such as a PDF splitter is never more than `limit` items ahead). Results keep
 * the items' order. The first failure stops new work and is thrown once running calls settle.
 */
export async function mapBounded<T, R>(
  items: AsyncIterable<T> | Iterable<T>,
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = []
  const running = new Set<Promise<void>>()
  let failure: { err: unknown } | undefined
  let index = 0
  for await (const item of items as AsyncIterable<T>) {
    if (failure) break
    const i = index++
    const p: Promise<void> = fn(item, i).then(
      (r) => {
        results[i] = r
      },
      (err) => {
        failure ??= { err }
      },
    )
    const tracked = p.finally(() => running.delete(tracked))
    running.add(tracked)
    if (running.size >= limit) await Promise.race(running)
  }
  await Promise.all(running)
  if (failure) throw failure.err
  return results
}
