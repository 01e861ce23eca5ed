import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { isTerminal } from '../contract/job-view.js'
import { tenantOf } from '../contract/tenants.js'
import { tenantHash } from './pool-pod.js'

/** What the runner pools read of the unfinished UtilityJobs, without walking all of them. */
export interface PoolJobView {
  /** Job name → the pool pod its status names, for every unfinished job that names one. */
  runnerPods(): ReadonlyMap<string, string>
  /** The tenants (their pod-label hashes) with an unfinished job of the utility: queued or running. */
  tenantsAtWork(slug: string): ReadonlySet<string>
}

interface Entry {
  slug: string
  /** The isolation tenant (`tenantOf`) and its hash, computed once per job. */
  tenant: string
  hash: string
  pod?: string
}

/**
 * An index of the unfinished UtilityJobs kept from the watch (every add, update and delete), so
 * that a pooled job's start and the pool upkeep cost the pool's size, not the queue's: with
 * 20,000 jobs queued, no pass walks them.
 */
export class UnfinishedJobs implements PoolJobView {
  private readonly jobs = new Map<string, Entry>()
  private readonly pods = new Map<string, string>()
  /** Utility → tenant hash → how many of its unfinished jobs. */
  private readonly tenants = new Map<string, Map<string, number>>()

  /** The index of a list of jobs (as a watch that just listed them). */
  static of(jobs: Iterable<UtilityJobResource>): UnfinishedJobs {
    const index = new UnfinishedJobs()
    for (const uj of jobs) index.apply('add', uj)
    return index
  }

  /** One event of the UtilityJob watch; true when it ends an unfinished job (once per job). */
  apply(event: 'add' | 'update' | 'delete', uj: UtilityJobResource): boolean {
    const name = uj.metadata.name
    const before = this.jobs.get(name)
    if (before) this.drop(name, before)
    if (event === 'delete' || isTerminal(uj) || uj.metadata.deletionTimestamp) return Boolean(before)
    const tenant = tenantOf(uj.spec)
    const entry: Entry = {
      slug: uj.spec.utility,
      tenant,
      hash: before?.tenant === tenant ? before.hash : tenantHash(tenant),
      pod: uj.status?.runnerPod,
    }
    this.jobs.set(name, entry)
    if (entry.pod) this.pods.set(name, entry.pod)
    let counts = this.tenants.get(entry.slug)
    if (!counts) this.tenants.set(entry.slug, (counts = new Map()))
    counts.set(entry.hash, (counts.get(entry.hash) ?? 0) + 1)
    return false
  }

  private drop(name: string, entry: Entry): void {
    this.jobs.delete(name)
    this.pods.delete(name)
    const counts = this.tenants.get(entry.slug)!
    const n = counts.get(entry.hash)! - 1
    if (n > 0) counts.set(entry.hash, n)
    else counts.delete(entry.hash)
    if (counts.size === 0) this.tenants.delete(entry.slug)
  }

  runnerPods(): ReadonlyMap<string, string> {
    return this.pods
  }

  tenantsAtWork(slug: string): ReadonlySet<string> {
    return new Set(this.tenants.get(slug)?.keys())
  }

  /** How many unfinished jobs the index holds. */
  get size(): number {
    return this.jobs.size
  }
}
