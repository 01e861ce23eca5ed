import { V1MicroTime, type CoordinationV1Api, type V1Lease } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import { apiStatus } from '../platform/kube.js'
import { parseTime } from '../contract/time.js'

/** The three calls leader election makes (a fake in unit tests, CoordinationV1Api in the operator). */
export type LeaseApi = Pick<
  CoordinationV1Api,
  'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'
>

export interface LeaderElectionOptions {
  api: LeaseApi
  namespace: string
  /** Name of the coordination.k8s.io Lease every replica competes for. */
  leaseName: string
  /** This replica: its pod name, so a restarted container takes its own lease back at once. */
  identity: string
  /** How long a lease that is not renewed stays with its holder (default 15 s). */
  leaseDurationMs?: number
  /** The leader gives up when it could not renew for this long (default 10 s). */
  renewDeadlineMs?: number
  /** Interval between attempts to acquire or renew (default 2 s). */
  retryPeriodMs?: number
  log: Logger
  now?: () => number
}

/** What a candidate saw of the lease, and when (by its own clock). */
export interface Observation {
  /** holder, renewTime and transitions: any change means the holder is alive. */
  record: string
  seenAt: number
}

export type ElectionAction =
  { kind: 'create' } | { kind: 'renew' } | { kind: 'acquire'; transitions: number } | { kind: 'follow'; holder: string }

function recordOf(lease: V1Lease): string {
  const s = lease.spec ?? {}
  return `${s.holderIdentity ?? ''}|${parseTime(s.renewTime) ?? ''}|${s.leaseTransitions ?? 0}`
}

/**
 * The decision of one election round, as client-go's leader election makes it. Expiry is judged
 * by when *this* candidate last saw the lease change (its own clock), never by comparing the
 * holder's renewTime with the local clock, so clock skew between nodes cannot hand the lease
 * to two replicas. A released lease (no holder) is free at once.
 */
export function electionAction(
  lease: V1Lease | undefined,
  identity: string,
  previous: Observation | undefined,
  now: number,
  defaultDurationMs: number,
): { action: ElectionAction; observed: Observation | undefined } {
  if (!lease) return { action: { kind: 'create' }, observed: undefined }
  const record = recordOf(lease)
  const observed = previous && previous.record === record ? previous : { record, seenAt: now }
  const holder = lease.spec?.holderIdentity ?? ''
  const transitions = lease.spec?.leaseTransitions ?? 0
  if (holder === identity) return { action: { kind: 'renew' }, observed }
  if (holder === '') return { action: { kind: 'acquire', transitions: transitions + 1 }, observed }
  const durationMs = (lease.spec?.leaseDurationSeconds ?? 0) * 1000 || defaultDurationMs
  if (now - observed.seenAt >= durationMs)
    return { action: { kind: 'acquire', transitions: transitions + 1 }, observed }
  return { action: { kind: 'follow', holder }, observed }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve()
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done)
  })

/**
 * Leader election on a coordination.k8s.io Lease: every operator replica watches and stays
 * ready, only the holder of the lease runs the reconcilers. Writes go through the Lease's
 * resourceVersion, so of two candidates taking an expired lease exactly one succeeds.
 *
 * `acquire()` waits until this replica leads; `holdUntilLost()` renews until a renewal has
 * failed for the renew deadline (or another holder shows up) and then resolves: the caller
 * must stop leading at once (the operator exits, to start again as a candidate).
 * `release()` hands the lease back on shutdown so a standby takes over without waiting for
 * expiry.
 */
export class LeaderElector {
  private readonly durationMs: number
  private readonly renewDeadlineMs: number
  private readonly retryMs: number
  private observed: Observation | undefined
  private leading = false
  private lastRenewAt = 0
  private acquiredAt = 0

  constructor(private readonly o: LeaderElectionOptions) {
    this.durationMs = o.leaseDurationMs ?? 15_000
    this.renewDeadlineMs = o.renewDeadlineMs ?? 10_000
    this.retryMs = o.retryPeriodMs ?? 2_000
    if (!(this.renewDeadlineMs < this.durationMs))
      throw new Error('leader election: the renew deadline must be shorter than the lease duration')
    if (!(this.retryMs < this.renewDeadlineMs))
      throw new Error('leader election: the retry period must be shorter than the renew deadline')
  }

  get isLeader(): boolean {
    return this.leading
  }

  /**
   * Whether this replica may still act as leader: it leads and renewed the lease within the
   * renew deadline. A process paused past that (SIGSTOP, a long GC, a frozen VM) finds this false
   * the moment it resumes, before its next renewal attempt could tell it, and must not act on
   * what it had queued: another replica may lead by now.
   */
  mayAct(): boolean {
    return this.leading && this.now() - this.lastRenewAt < this.renewDeadlineMs
  }

  private now(): number {
    return this.o.now ? this.o.now() : Date.now()
  }

  private coords() {
    return { name: this.o.leaseName, namespace: this.o.namespace }
  }

  private async read(): Promise<V1Lease | undefined> {
    try {
      return await this.o.api.readNamespacedLease(this.coords())
    } catch (err) {
      if (apiStatus(err) === 404) return undefined
      throw err
    }
  }

  private spec(now: number, acquireTime: number, transitions: number) {
    return {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.ceil(this.durationMs / 1000),
      acquireTime: new V1MicroTime(acquireTime),
      renewTime: new V1MicroTime(now),
      leaseTransitions: transitions,
    }
  }

  /** One round: true when this replica holds the lease afterwards. Conflicts are a lost round, not an error. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const lease = await this.read()
    const now = this.now()
    const { action, observed } = electionAction(lease, this.o.identity, this.observed, now, this.durationMs)
    this.observed = observed
    try {
      switch (action.kind) {
        case 'follow':
          return false
        case 'create':
          await this.o.api.createNamespacedLease({
            namespace: this.o.namespace,
            body: { metadata: this.coords(), spec: this.spec(now, now, 0) },
          })
          this.acquiredAt = now
          return true
        case 'renew': {
          const acquired = parseTime(lease!.spec?.acquireTime) ?? now
          await this.o.api.replaceNamespacedLease({
            ...this.coords(),
            body: { ...lease!, spec: this.spec(now, acquired, lease!.spec?.leaseTransitions ?? 0) },
          })
          if (!this.leading) this.acquiredAt = now
          return true
        }
        case 'acquire':
          await this.o.api.replaceNamespacedLease({
            ...this.coords(),
            body: { ...lease!, spec: this.spec(now, now, action.transitions) },
          })
          this.acquiredAt = now
          return true
      }
    } catch (err) {
      const status = apiStatus(err)
      if (status === 409 || status === 404) return false // another candidate wrote first
      throw err
    }
  }

  /** Resolves once this replica leads (true), or when `signal` aborts first (false). */
  async acquire(signal?: AbortSignal): Promise<boolean> {
    let lastFollowLog = ''
    while (!signal?.aborted) {
      try {
        if (await this.tryAcquireOrRenew()) {
          this.leading = true
          this.lastRenewAt = this.now()
          this.o.log.info(
            { identity: this.o.identity, lease: this.o.leaseName },
            'leader election: acquired the lease, leading',
          )
          return true
        }
        const holder = this.observed?.record.split('|')[0] ?? ''
        if (holder !== lastFollowLog)
          this.o.log.info({ identity: this.o.identity, holder }, 'leader election: another replica leads, standing by')
        lastFollowLog = holder
      } catch (err) {
        this.o.log.warn({ err: (err as Error).message }, 'leader election: reading or writing the lease failed')
      }
      await sleep(this.retryMs, signal)
    }
    return false
  }

  /**
   * Renews every retry period while leading. Resolves when leadership is lost (a renewal kept
   * failing past the renew deadline, or the lease has another holder) or `signal` aborts.
   */
  async holdUntilLost(signal?: AbortSignal): Promise<'lost' | 'stopped'> {
    while (!signal?.aborted) {
      await sleep(this.retryMs, signal)
      if (signal?.aborted) break
      try {
        if (await this.tryAcquireOrRenew()) {
          this.lastRenewAt = this.now()
          continue
        }
        this.o.log.error({ identity: this.o.identity }, 'leader election: the lease has another holder')
      } catch (err) {
        this.o.log.warn({ err: (err as Error).message }, 'leader election: renewing the lease failed')
        if (this.now() - this.lastRenewAt < this.renewDeadlineMs) continue
        this.o.log.error(
          { renewDeadlineMs: this.renewDeadlineMs },
          'leader election: could not renew within the deadline',
        )
      }
      this.leading = false
      return 'lost'
    }
    return 'stopped'
  }

  /** Hands the lease back (holder cleared) if this replica holds it: a standby takes it at its next round. */
  async release(): Promise<void> {
    if (!this.leading) return
    this.leading = false
    try {
      const lease = await this.read()
      if (!lease || lease.spec?.holderIdentity !== this.o.identity) return
      const now = this.now()
      await this.o.api.replaceNamespacedLease({
        ...this.coords(),
        body: {
          ...lease,
          spec: {
            leaseDurationSeconds: 1,
            acquireTime: new V1MicroTime(now),
            renewTime: new V1MicroTime(now),
            leaseTransitions: lease.spec?.leaseTransitions ?? 0,
          },
        },
      })
      this.o.log.info(
        { identity: this.o.identity, heldMs: now - this.acquiredAt },
        'leader election: released the lease',
      )
    } catch (err) {
      this.o.log.warn(
        { err: (err as Error).message },
        'leader election: releasing the lease failed; it expires on its own',
      )
    }
  }
}
