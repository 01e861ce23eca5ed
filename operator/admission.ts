import type { Logger } from 'pino'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { effectiveStatus, isTerminal } from '../contract/job-view.js'
import { ownerOfJob } from '../contract/owners.js'
import { cancelWanted } from './next-status.js'

/**
 * Admission: how many jobs of each utility run at once, and which queued job goes next
 * (docs/adr/0013-admission-and-fair-share.md). Every job, sync or async, stays `queued` with no
 * batch Job and no Pod until admitted; no owner (a person's keys and playground runs together, or
 * a key of its own: contract/owners.ts) holds more than its share of a utility's slots. In this
 * module a "tenant" is such an owner.
 */

/** What admission needs to know of one unfinished job. */
export interface AdmissionView {
  name: string
  utility: string
  tenant: string
  createdAtMs: number
  mode: 'sync' | 'async'
  /** Its batch Job exists (or was admitted and is being made): it holds a slot. */
  holdsSlot: boolean
  cancelRequested: boolean
  /** It holds a slot and its runner pod waits for a node: the scheduler found none with room. */
  waitingForNode?: boolean
}

/**
 * The most slots of a utility one tenant may hold at once while another tenant waits: its share
 * of the limit, rounded down, at least one. With a share below 1 the rest stay free for other
 * tenants, so a tenant that fills its share with jobs that never end cannot make another wait on
 * them.
 */
export function tenantCap(limit: number, share: number): number {
  return Math.max(1, Math.floor(limit * share + 1e-9))
}

/** Slots a tenant alone never takes: the reserve a newcomer is admitted to at once. */
export const RESERVE_SLOTS = 1

/**
 * The most slots a tenant may hold now (pure; work-conserving): its share (`tenantCap`) while
 * another tenant waits; alone, every slot but the reserve, which only others may take.
 */
export function capNow(limit: number, share: number, othersWaiting: boolean): number {
  return othersWaiting ? tenantCap(limit, share) : Math.max(1, limit - RESERVE_SLOTS, tenantCap(limit, share))
}

/**
 * The queued jobs to admit now (pure). Per utility, the free slots (limit minus jobs holding a
 * slot) go one at a time to the tenant with the fewest jobs holding or just given a slot; among
 * equals, to the tenant served longest ago (`lastServed`, a serial per tenant, updated here as
 * slots are given; never served comes first), then the oldest job. A tenant gets no more than
 * `capNow`: its share while another tenant has jobs queued, else all but the reserve. Within a
 * tenant, sync jobs (a client is waiting) first, then the oldest. So a key with 10,000 queued
 * jobs and a key with one take turns: the single job takes the reserve (or waits at most one
 * slot turnover), whatever the backlog ahead of it, and never on the jobs of a tenant at its
 * cap. While a job of a utility holds a slot with its runner pod waiting for a node that has
 * room, no further job of that utility is admitted: a new pod would only race the waiting one
 * for the next room freed (the scheduler's queue keeps no fair turns), so jobs wait here
 * instead, in turn.
 */
export function planAdmissions(
  views: readonly AdmissionView[],
  limitOf: (utility: string) => number,
  lastServed: Map<string, number> = new Map(),
  share = 1,
): AdmissionView[] {
  let serial = Math.max(0, ...lastServed.values())
  const out: AdmissionView[] = []
  for (const [utility, jobs] of groupBy(views, (v) => v.utility)) {
    const holding = jobs.filter((j) => j.holdsSlot)
    if (holding.some((j) => j.waitingForNode)) continue
    const limit = limitOf(utility)
    let free = limit - holding.length
    if (free <= 0) continue
    const load = new Map<string, number>()
    for (const j of holding) load.set(j.tenant, (load.get(j.tenant) ?? 0) + 1)
    const queues = groupBy(
      jobs.filter((j) => !j.holdsSlot && !j.cancelRequested),
      (j) => j.tenant,
    )
    // Every tenant with a job queued now is waiting, at its cap or not.
    const waiting = new Set(queues.keys())
    const cap = (t: string) => capNow(limit, share, waiting.size > (waiting.has(t) ? 1 : 0))
    for (const t of [...queues.keys()]) if ((load.get(t) ?? 0) >= cap(t)) queues.delete(t)
    const rank = (v: AdmissionView) => (v.mode === 'sync' ? 0 : 1)
    const order = (a: AdmissionView, b: AdmissionView) =>
      rank(a) - rank(b) || a.createdAtMs - b.createdAtMs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    // Only a tenant's first few can be admitted this pass: those are picked, the rest never sorted.
    for (const [t, q] of queues) queues.set(t, smallest(q, Math.min(free, cap(t) - (load.get(t) ?? 0)), order))
    const before = (t: string, head: AdmissionView, u: string, uHead: AdmissionView): boolean => {
      const [lt, lu] = [load.get(t) ?? 0, load.get(u) ?? 0]
      if (lt !== lu) return lt < lu
      const [st, su] = [lastServed.get(t) ?? -1, lastServed.get(u) ?? -1]
      if (st !== su) return st < su
      return head.createdAtMs < uHead.createdAtMs || (head.createdAtMs === uHead.createdAtMs && head.name < uHead.name)
    }
    while (free > 0 && queues.size > 0) {
      let best: string | undefined
      for (const [tenant, q] of queues) {
        if (best === undefined || before(tenant, q[0], best, queues.get(best)![0])) best = tenant
      }
      const q = queues.get(best!)!
      out.push(q.shift()!)
      load.set(best!, (load.get(best!) ?? 0) + 1)
      if (q.length === 0 || load.get(best!)! >= cap(best!)) queues.delete(best!)
      lastServed.set(best!, ++serial)
      free--
    }
  }
  return out
}

export interface AdmissionMetrics {
  queued(utility: string, n: number): void
  running(utility: string, n: number): void
  admitted(utility: string, waitSeconds: number): void
}

export interface AdmissionOptions {
  limitOf: (utility: string) => number
  /** The share of each utility's slots one tenant may hold (0 < share ≤ 1; `tenantCap`). */
  share?: number
  /** Unfinished and finished UtilityJobs as the watch has them. */
  list: () => readonly UtilityJobResource[]
  hasJob: (uj: UtilityJobResource) => boolean
  /** Whether the kubelet still shows the job's runner at work (its pod's status: not exited yet). */
  runnerWorking?: (uj: UtilityJobResource) => boolean
  /** Names of the UtilityJobs whose runner pod the scheduler could not place yet (read once a pass). */
  waitingForNode?: () => ReadonlySet<string>
  /** Whether an API key is revoked (its queued jobs are cancelled, never admitted). */
  keyRevoked?: (apiKeyId: string) => boolean
  /** Hands an admitted job to the reconciler. */
  enqueue: (name: string) => void
  log: Logger
  metrics?: AdmissionMetrics
  now?: () => number
  /** The least time between two scheduled passes (ms): the asks within it gather into one pass. */
  debounceMs?: number
}

/** Scheduled passes start at least this many times the last pass's duration apart (~10 % of a core at most). */
export const PASS_SPACING = 10

/** One job object as a pass reads it (`Admission.factsOf`). */
interface JobFacts {
  /** The object these facts are of (the watch replaces an object on every change). */
  of: UtilityJobResource
  /** The last pass that read them (the others are of jobs gone). */
  pass: number
  terminal: boolean
  /** Its status says running (a job that holds no slot may still: it counts as running). */
  running: boolean
  /** Its view while it holds no slot, its key not revoked. */
  queued: Readonly<AdmissionView>
}

/**
 * The leader's admission state: which queued jobs it has let through whose batch Job the watch
 * does not show yet (so concurrent reconciles never give one slot twice). A pass reads the
 * caches, plans, and enqueues the admitted jobs; it runs when a job is waiting and whenever one
 * finishes (debounced), level-triggered like the reconciler.
 */
export class Admission {
  private readonly admitted = new Set<string>()
  /** Sync jobs a pass has held back (a client waits on them: the reconciler marks them queued). */
  private readonly held = new Set<string>()
  /** Round-robin memory: when each tenant last got a slot (a serial), per utility. */
  private readonly lastServed = new Map<string, Map<string, number>>()
  /**
   * Jobs that finished from their stored result before their runner's exit was reported: each
   * keeps its slot while its runner pod still shows it at work, as before it finished.
   */
  private readonly finishing = new Set<string>()
  /** Jobs whose runner pod waited for a node at the last pass (their utility admitted nothing). */
  private readonly unplaced = new Set<string>()
  /** Utilities seen so far: their gauges go back to 0 when they have no jobs. */
  private readonly seen = new Set<string>()
  /** Jobs of each utility still waiting for a slot after the last pass. */
  private readonly queuedAfterPass = new Map<string, number>()
  private timer: NodeJS.Timeout | undefined
  /** When the last scheduled pass ran (performance.now()), and how long it took. */
  private lastPassAt = Number.NEGATIVE_INFINITY
  private lastPassMs = 0

  /**
   * What a pass reads of each job object that only changes with the object (the watch replaces
   * an object on every change, never edits it): computed once per object, not once per pass, so
   * a pass over 20,000 queued jobs does little more than look them up.
   */
  private readonly facts = new Map<string, JobFacts>()
  private passes = 0

  constructor(private readonly o: AdmissionOptions) {}

  private factsOf(uj: UtilityJobResource): JobFacts {
    let facts = this.facts.get(uj.metadata.name)
    if (facts?.of === uj) facts.pass = this.passes
    else {
      const terminal = isTerminal(uj)
      facts = {
        of: uj,
        pass: this.passes,
        terminal,
        running: effectiveStatus(uj).state === 'running',
        queued: {
          name: uj.metadata.name,
          utility: uj.spec.utility,
          tenant: ownerOfJob(uj.spec),
          createdAtMs: Date.parse(uj.spec.createdAt),
          mode: uj.spec.mode,
          holdsSlot: false,
          cancelRequested: !terminal && cancelWanted(uj),
          waitingForNode: false,
        },
      }
      this.facts.set(uj.metadata.name, facts)
    }
    return facts
  }

  /** Whether the reconciler may create this job's batch Job now. */
  mayStart(uj: UtilityJobResource): boolean {
    return this.admitted.has(uj.metadata.name) || this.o.hasJob(uj)
  }

  /** The job finished before its runner's exit was reported: its slot stays taken until then. */
  finishedEarly(name: string): void {
    this.finishing.add(name)
  }

  /** Whether the job finished early and still holds its slot (a change of its pod asks for a pass). */
  isFinishing(name: string): boolean {
    return this.finishing.has(name)
  }

  /**
   * Whether this job's runner pod waited for a node at the last pass, holding back its utility's
   * admissions (a change of the job or its pod then asks for a pass).
   */
  heldBackBy(name: string): boolean {
    return this.unplaced.has(name)
  }

  /** Whether jobs of this utility were left waiting for a slot at the last pass. */
  hasWaiting(utility: string): boolean {
    return (this.queuedAfterPass.get(utility) ?? 0) > 0
  }

  /** Whether a pass has held this sync job back for want of a slot (it may have been admitted since). */
  wasHeld(name: string): boolean {
    return this.held.has(name)
  }

  /**
   * Asks for a pass soon (many asks, one pass): at once when none ran within the debounce time
   * (a job arriving at a quiet operator waits for nothing), else when that time is up. Passes
   * are spaced by at least PASS_SPACING times the last one's cost too, so however deep the queue
   * (a pass reads every unfinished job), admission takes a bounded share of the leader's time.
   */
  schedule(): void {
    if (this.timer) return
    const spacing = Math.max(this.o.debounceMs ?? 20, PASS_SPACING * this.lastPassMs)
    const wait = Math.max(0, this.lastPassAt + spacing - performance.now())
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.lastPassAt = performance.now()
      try {
        this.pass()
      } catch (err) {
        this.o.log.error({ err }, 'admission pass failed')
      }
      this.lastPassMs = performance.now() - this.lastPassAt
    }, wait)
    this.timer.unref?.()
  }

  pass(): AdmissionView[] {
    const now = this.o.now?.() ?? Date.now()
    // Names in the leader's own sets that the caches still show (the sets are pruned to them).
    const live = new Set<string>()
    const views: AdmissionView[] = []
    const perUtility = new Map<string, { queued: number; running: number }>()
    const unplaced = this.o.waitingForNode?.() ?? new Set<string>()
    this.passes++
    let read = 0
    for (const uj of this.o.list()) {
      if (uj.metadata.deletionTimestamp) continue
      const facts = this.factsOf(uj)
      read++
      const name = uj.metadata.name
      let holdsSlot: boolean
      if (facts.terminal) {
        // Finished early, its runner not yet seen to exit: it keeps its slot until then.
        if (!this.finishing.has(name) || !this.o.runnerWorking?.(uj)) continue
        holdsSlot = true
      } else {
        const hasJob = this.o.hasJob(uj)
        if (hasJob) this.admitted.delete(name) // the watch has its Job now: that counts from here on
        holdsSlot = hasJob || this.admitted.has(name)
      }
      if (this.admitted.has(name) || this.finishing.has(name) || this.held.has(name)) live.add(name)
      let view = facts.queued
      if (holdsSlot)
        view = {
          ...view,
          holdsSlot,
          cancelRequested: !facts.terminal && cancelWanted(uj, this.o.keyRevoked),
          waitingForNode: unplaced.has(name),
        }
      else if (!view.cancelRequested && uj.spec.apiKeyId && this.o.keyRevoked?.(uj.spec.apiKeyId))
        view = { ...view, cancelRequested: true }
      views.push(view)
      let c = perUtility.get(view.utility)
      if (!c) perUtility.set(view.utility, (c = { queued: 0, running: 0 }))
      if (holdsSlot || facts.running) c.running++
      else c.queued++
    }
    if (this.facts.size > read)
      for (const [name, facts] of this.facts) if (facts.pass !== this.passes) this.facts.delete(name)
    const wasHeld = [...this.unplaced].sort().join(',')
    this.unplaced.clear()
    for (const v of views) if (v.waitingForNode) this.unplaced.add(v.name)
    if ([...this.unplaced].sort().join(',') !== wasHeld && this.unplaced.size > 0)
      this.o.log.info(
        {
          waiting: [...this.unplaced],
          utilities: [...new Set(views.filter((v) => v.waitingForNode).map((v) => v.utility))],
        },
        'admission held: a runner pod waits for a node with room',
      )
    for (const name of this.admitted) if (!live.has(name)) this.admitted.delete(name)
    for (const name of this.finishing) if (!live.has(name)) this.finishing.delete(name)
    for (const name of this.held) if (!live.has(name)) this.held.delete(name)
    const chosen: AdmissionView[] = []
    for (const [utility, list] of groupBy(views, (v) => v.utility)) {
      const served = this.lastServed.get(utility) ?? new Map<string, number>()
      this.lastServed.set(utility, served)
      chosen.push(...planAdmissions(list, this.o.limitOf, served, this.o.share ?? 1))
      // Tenants with nothing left to run are forgotten (they start as "never served" again).
      const tenants = new Set(list.map((v) => v.tenant))
      for (const t of served.keys()) if (!tenants.has(t)) served.delete(t)
    }
    const chosenNames = new Set(chosen.map((v) => v.name))
    for (const v of views) {
      // A sync job this pass could not admit: its reconcile shows it queued (Admitted False).
      if (v.mode !== 'sync' || v.holdsSlot || v.cancelRequested || chosenNames.has(v.name) || this.held.has(v.name))
        continue
      this.held.add(v.name)
      this.o.enqueue(v.name)
    }
    for (const v of chosen) {
      this.admitted.add(v.name)
      const c = perUtility.get(v.utility)!
      c.queued--
      c.running++
      this.o.metrics?.admitted(v.utility, Math.max(0, now - v.createdAtMs) / 1000)
      this.o.enqueue(v.name)
    }
    for (const u of perUtility.keys()) this.seen.add(u)
    for (const u of this.seen) if (!perUtility.has(u)) perUtility.set(u, { queued: 0, running: 0 })
    for (const [utility, c] of perUtility) {
      this.queuedAfterPass.set(utility, c.queued)
      this.o.metrics?.queued(utility, c.queued)
      this.o.metrics?.running(utility, c.running)
    }
    // In the order decided (the Jobs themselves are created by concurrent workers, in any order).
    if (chosen.length) this.o.log.info({ admitted: chosen.map((v) => v.name) }, 'jobs admitted')
    return chosen
  }
}

/** The k smallest items in order (pure): one pass over the items, never a sort of them all. */
export function smallest<T>(items: readonly T[], k: number, cmp: (a: T, b: T) => number): T[] {
  if (k <= 0) return []
  if (k >= items.length) return [...items].sort(cmp)
  const best: T[] = []
  for (const item of items) {
    if (best.length === k && cmp(item, best[k - 1]) >= 0) continue
    let lo = 0
    let hi = best.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cmp(best[mid], item) <= 0) lo = mid + 1
      else hi = mid
    }
    best.splice(lo, 0, item)
    if (best.length > k) best.pop()
  }
  return best
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>()
  for (const item of items) {
    const list = out.get(key(item))
    if (list) list.push(item)
    else out.set(key(item), [item])
  }
  return out
}
