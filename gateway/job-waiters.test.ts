import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { JobWaiters } from './job-waiters.js'

const job = (state: string, jobId = 'job_01J000000000000000000000A1'): UtilityJobResource =>
  ({
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name: 'uj-a1' },
    spec: { jobId },
    status: { state },
  }) as unknown as UtilityJobResource

/** Waiters whose reader's "job record" is a variable the test sets. */
function storeWith(record: { now: UtilityJobResource | undefined; reads: number }) {
  return new JobWaiters({
    current: async () => {
      record.reads++
      return record.now
    },
  })
}

describe('JobWaiters (no cache: woken by watch events, answered from the record)', () => {
  it('answers at once when the job already satisfies the wait', async () => {
    const record = { now: job('queued'), reads: 0 }
    const done = await storeWith(record).waitForTerminal(job('succeeded'), 10_000)
    expect(done.status?.state).toBe('succeeded')
    expect(record.reads).toBe(0)
  })

  it('is woken by a watch event that satisfies the wait, ignoring ones that do not', async () => {
    const record = { now: job('queued'), reads: 0 }
    const store = storeWith(record)
    const waiting = store.waitForTerminal(job('queued'), 10_000)
    await new Promise((r) => setTimeout(r, 5))
    store.observe(job('running'))
    store.observe(job('failed', 'job_01J000000000000000000000B2')) // another job under the same name
    store.observe(job('succeeded'))
    expect((await waiting).status?.state).toBe('succeeded')
  })

  it('sees a change made before the waiter was registered (it reads the record once)', async () => {
    const record = { now: job('succeeded'), reads: 0 }
    const done = await storeWith(record).waitForTerminal(job('queued'), 10_000)
    expect(done.status?.state).toBe('succeeded')
    expect(record.reads).toBe(1)
  })

  it('answers the job as it is at the timeout, read afresh', async () => {
    const record = { now: job('queued'), reads: 0 }
    const store = storeWith(record)
    const waiting = store.waitForTerminal(job('queued'), 30)
    await new Promise((r) => setTimeout(r, 5))
    record.now = job('running')
    expect((await waiting).status?.state).toBe('running')
  })

  it('looks again on a resync (events in between may have been missed)', async () => {
    const record = { now: job('queued'), reads: 0 }
    const store = storeWith(record)
    const waiting = store.waitForTerminal(job('queued'), 10_000)
    await new Promise((r) => setTimeout(r, 5))
    record.now = job('cancelled')
    store.resync()
    expect((await waiting).status?.state).toBe('cancelled')
  })

  it('ends the wait on abort and forgets its waiters', async () => {
    const record = { now: job('queued'), reads: 0 }
    const store = storeWith(record)
    const abort = new AbortController()
    const waiting = store.waitForTerminal(job('queued'), 10_000, abort.signal)
    abort.abort()
    expect((await waiting).status?.state).toBe('queued')
    expect((store as unknown as { waiters: Map<string, unknown> }).waiters.size).toBe(0)
  })
})
