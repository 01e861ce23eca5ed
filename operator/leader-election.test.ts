import type { V1Lease } from '@kubernetes/client-node'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { electionAction, LeaderElector, type LeaseApi } from './leader-election.js'

const log = pino({ level: 'silent' })

function lease(holder: string | undefined, renewTime: number, transitions = 0, durationSeconds = 15): V1Lease {
  return {
    metadata: { name: 'l', resourceVersion: '1' },
    spec: {
      holderIdentity: holder,
      renewTime: new Date(renewTime),
      leaseTransitions: transitions,
      leaseDurationSeconds: durationSeconds,
    },
  }
}

describe('electionAction', () => {
  it('creates a lease that does not exist', () => {
    expect(electionAction(undefined, 'a', undefined, 0, 15_000).action).toEqual({ kind: 'create' })
  })

  it('renews its own lease, also after a restart (no earlier observation)', () => {
    expect(electionAction(lease('a', 0), 'a', undefined, 100_000, 15_000).action).toEqual({ kind: 'renew' })
  })

  it('takes a released lease (no holder) at once, counting a transition', () => {
    expect(electionAction(lease(undefined, 0, 3), 'b', undefined, 0, 15_000).action).toEqual({
      kind: 'acquire',
      transitions: 4,
    })
  })

  it('follows a holder it has not watched go silent for a whole lease duration, whatever renewTime says', () => {
    // renewTime is far in the past by our clock (skew), but we only just saw the record.
    const first = electionAction(lease('a', 0), 'b', undefined, 1_000_000, 15_000)
    expect(first.action).toEqual({ kind: 'follow', holder: 'a' })
    const later = electionAction(lease('a', 0), 'b', first.observed, 1_000_000 + 14_999, 15_000)
    expect(later.action.kind).toBe('follow')
    const expired = electionAction(lease('a', 0, 2), 'b', first.observed, 1_000_000 + 15_000, 15_000)
    // The record changed (transitions), so the clock restarts: still following.
    expect(expired.action.kind).toBe('follow')
    const silent = electionAction(lease('a', 0), 'b', first.observed, 1_000_000 + 15_000, 15_000)
    expect(silent.action).toEqual({ kind: 'acquire', transitions: 1 })
  })

  it("uses the holder's lease duration when the lease names one", () => {
    const first = electionAction(lease('a', 0, 0, 2), 'b', undefined, 0, 15_000)
    expect(electionAction(lease('a', 0, 0, 2), 'b', first.observed, 2_000, 15_000).action.kind).toBe('acquire')
  })

  it('sees a renewal as life: a new renewTime restarts the expiry clock', () => {
    const first = electionAction(lease('a', 0), 'b', undefined, 0, 15_000)
    const renewed = electionAction(lease('a', 2_000), 'b', first.observed, 10_000, 15_000)
    expect(renewed.observed!.seenAt).toBe(10_000)
    expect(electionAction(lease('a', 2_000), 'b', renewed.observed, 20_000, 15_000).action.kind).toBe('follow')
  })
})

/** An in-memory Lease store with the API server's optimistic concurrency (resourceVersion). */
class FakeLeases implements LeaseApi {
  lease: V1Lease | undefined
  private rv = 0
  failing = false

  private check() {
    if (this.failing) throw Object.assign(new Error('connection refused'), { code: undefined })
  }

  async readNamespacedLease(): Promise<V1Lease> {
    this.check()
    if (!this.lease) throw Object.assign(new Error('not found'), { code: 404 })
    return structuredClone(this.lease)
  }

  async createNamespacedLease(req: { namespace: string; body: V1Lease }): Promise<V1Lease> {
    this.check()
    if (this.lease) throw Object.assign(new Error('exists'), { code: 409 })
    this.lease = {
      ...structuredClone(req.body),
      metadata: { ...req.body.metadata, resourceVersion: String(++this.rv) },
    }
    return this.lease
  }

  async replaceNamespacedLease(req: { name: string; namespace: string; body: V1Lease }): Promise<V1Lease> {
    this.check()
    if (!this.lease) throw Object.assign(new Error('not found'), { code: 404 })
    if (req.body.metadata?.resourceVersion !== this.lease.metadata?.resourceVersion)
      throw Object.assign(new Error('conflict'), { code: 409 })
    this.lease = {
      ...structuredClone(req.body),
      metadata: { ...req.body.metadata, resourceVersion: String(++this.rv) },
    }
    return this.lease
  }
}

const fast = { leaseDurationMs: 300, renewDeadlineMs: 200, retryPeriodMs: 20 }
const LONG = { leaseDurationMs: 20_000, renewDeadlineMs: 10_000, retryPeriodMs: 20 }
const elector = (api: LeaseApi, identity: string) =>
  new LeaderElector({ api, namespace: 'ns', leaseName: 'op', identity, log, ...fast })

describe('LeaderElector', () => {
  it('lets exactly one of two candidates lead; a release hands over at once', async () => {
    const api = new FakeLeases()
    // A lease far longer than the hand-over may take on a busy machine: b gets it because a let
    // it go, never because it expired.
    const a = new LeaderElector({ api, namespace: 'ns', leaseName: 'op', identity: 'a', log, ...LONG })
    const b = new LeaderElector({ api, namespace: 'ns', leaseName: 'op', identity: 'b', log, ...LONG })
    expect(await a.acquire()).toBe(true)
    const standby = new AbortController()
    const bLeads = b.acquire(standby.signal)
    await new Promise((r) => setTimeout(r, 100))
    expect(b.isLeader).toBe(false)
    expect(api.lease!.spec!.holderIdentity).toBe('a')

    const started = Date.now()
    await a.release()
    expect(api.lease!.spec!.holderIdentity).toBeUndefined()
    expect(await bLeads).toBe(true)
    expect(Date.now() - started).toBeLessThan(LONG.leaseDurationMs) // no waiting for expiry
    expect(api.lease!.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 })
  })

  it('takes over a lease whose holder stopped renewing (a crash), after the lease duration', async () => {
    const api = new FakeLeases()
    expect(await elector(api, 'a').acquire()).toBe(true) // a never renews again
    const started = Date.now()
    expect(await elector(api, 'b').acquire()).toBe(true)
    expect(Date.now() - started).toBeGreaterThanOrEqual(fast.leaseDurationMs - 20)
  })

  it('renews while leading, and reports the loss when renewals fail past the deadline', async () => {
    const api = new FakeLeases()
    const a = elector(api, 'a')
    await a.acquire()
    const acquiredAt = api.lease!.spec!.renewTime!.getTime()
    const holding = a.holdUntilLost()
    // Renewed since it was acquired (every retry period, 20 ms here; a busy machine may take longer).
    await expect
      .poll(() => api.lease!.spec!.renewTime!.getTime(), { timeout: 10_000, interval: 20 })
      .toBeGreaterThan(acquiredAt)
    api.failing = true
    const failedAt = Date.now()
    expect(await holding).toBe('lost')
    expect(Date.now() - failedAt).toBeGreaterThanOrEqual(fast.renewDeadlineMs - 40)
    expect(a.isLeader).toBe(false)
  })

  it('may act only within the renew deadline of its last renewal: a paused leader knows on resume, before renewing', async () => {
    let now = 1_000_000
    const api = new FakeLeases()
    const a = new LeaderElector({
      api,
      namespace: 'ns',
      leaseName: 'op',
      identity: 'a',
      log,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      now: () => now,
    })
    expect(a.mayAct()).toBe(false)
    expect(await a.acquire()).toBe(true)
    expect(a.mayAct()).toBe(true)
    now += 9_999
    expect(a.mayAct()).toBe(true)
    // Paused for 25 s (past the lease): on resume, nothing has run yet, and it must not act.
    now += 15_001
    expect(a.isLeader).toBe(true)
    expect(a.mayAct()).toBe(false)
  })

  it('reports the loss at once when another replica holds the lease', async () => {
    const api = new FakeLeases()
    const a = elector(api, 'a')
    await a.acquire()
    api.lease = { ...api.lease!, spec: { ...api.lease!.spec, holderIdentity: 'intruder' } }
    expect(await a.holdUntilLost()).toBe('lost')
  })

  it('stops holding when asked, and a restarted replica with the same identity takes its lease back at once', async () => {
    const api = new FakeLeases()
    // A lease far longer than the re-acquire may take on a busy machine: "at once" means without
    // waiting for it to expire.
    const a = new LeaderElector({ api, namespace: 'ns', leaseName: 'op', identity: 'a', log, ...LONG })
    await a.acquire()
    const stop = new AbortController()
    const holding = a.holdUntilLost(stop.signal)
    stop.abort()
    expect(await holding).toBe('stopped')
    const restarted = new LeaderElector({ api, namespace: 'ns', leaseName: 'op', identity: 'a', log, ...LONG })
    const started = Date.now()
    expect(await restarted.acquire()).toBe(true)
    expect(Date.now() - started).toBeLessThan(LONG.leaseDurationMs)
  })

  it('refuses timings that cannot work', () => {
    expect(
      () =>
        new LeaderElector({
          api: new FakeLeases(),
          namespace: 'n',
          leaseName: 'l',
          identity: 'a',
          log,
          leaseDurationMs: 10,
          renewDeadlineMs: 10,
        }),
    ).toThrow(/renew deadline/)
  })
})
