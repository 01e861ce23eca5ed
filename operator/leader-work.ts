import type { Logger } from 'pino'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { idOfObjectName } from '../contract/ids.js'
import { isTerminal } from '../contract/job-view.js'
import type { ObjectCache } from '@kubernetes/client-node'
import { every, type Program } from '../platform/program.js'
import type { CallbackController } from './callbacks/controller.js'
import type { OperatorMetrics } from './metrics.js'
import type { UtilityJobReconciler } from './reconciler.js'
import type { RunnerPools } from './runner-pools.js'
import type { Worker, WorkQueue } from './work-queue.js'

/** How often the counts the queued-job ceilings read are checked against the rows. */
export const RECOUNT_MS = 300_000

export interface LeaderWork {
  namespace: string
  utilityJobs: ObjectCache<UtilityJobResource>
  queue: WorkQueue
  callbackQueue: WorkQueue
  reconciler: Pick<UtilityJobReconciler, 'reconcile'>
  callbacks: Pick<CallbackController, 'reconcile' | 'enqueuePending'>
  /** Retention, job record upkeep and signing-secret sweeps, every `sweepMs`. */
  sweeps: Array<{ name: string; sweep(): Promise<unknown> }>
  sweepMs: number
  /** The runner pools' upkeep (docs/adr/0026). */
  pools?: Pick<RunnerPools, 'lead' | 'sync'>
  /** Fails jobs whose hand-off to the cluster was lost (after the caches synced). */
  failLostHandoffs(): Promise<unknown>
  /** Recomputes the queued counts from the rows (platform/db/queued-counts.ts recountQueued). */
  recountQueued(): Promise<unknown>
  /** Says this operator runs jobs whose input rides with them (docs/adr/0043): once it leads. */
  announceSealedInputs(): Promise<unknown>
  /** Throws when this replica may no longer act (program.fence). */
  fence(): void
  concurrency: number
  callbackConcurrency: number
  metrics: OperatorMetrics
  log: Logger
}

/**
 * What only the leader does: the reconcilers, the callback controller and the sweeps, with a
 * level-triggered resync now and then whatever the events. Each work queue takes nothing new
 * once leadership ends, and its in-flight items finish.
 */
export function addLeaderWork(program: Program, w: LeaderWork): Program {
  const warnOnFailure = (what: string) => (err: unknown) =>
    w.log.warn({ err: (err as Error).message }, `${what} failed`)
  const requeued = (what: string) => (key: string, err: unknown, retryInMs: number) => {
    w.metrics.reconcileErrors.inc()
    w.log.warn(
      { key, jobId: idOfObjectName(key), err: err instanceof Error ? err.message : String(err), retryInMs },
      `${what} failed, requeued`,
    )
  }
  const drained = (q: WorkQueue, work: Worker, concurrency: number, what: string) => (signal: AbortSignal) => {
    signal.addEventListener('abort', () => q.stop(), { once: true })
    return q.run(work, concurrency, requeued(what)).then(() => undefined)
  }
  return (
    program
      .leaderOnly({
        name: 'leader gauge',
        run: (signal) => {
          w.metrics.leader.set(1)
          signal.addEventListener('abort', () => w.metrics.leader.set(0), { once: true })
        },
      })
      // Tried every 5 s until it is written (the gateway stores every input until then; the
      // Secret exists once the gateway made its first key or sealing key), each reason told once.
      .leaderOnly({
        name: 'sealed inputs',
        run: (signal) => {
          let said = false
          let told = ''
          const say = () => {
            if (!said)
              void w.announceSealedInputs().then(
                () => (said = true),
                (err: unknown) => {
                  const why = (err as Error).message
                  if (why !== told) warnOnFailure('announcing sealed inputs')(err)
                  told = why
                },
              )
          }
          return every(5_000, say, signal)
        },
      })
      .leaderOnly({
        name: 'resync',
        run: (signal) =>
          every(
            30_000,
            () => {
              for (const uj of w.utilityJobs.list(w.namespace)) if (!isTerminal(uj)) w.queue.add(uj.metadata.name)
              w.callbacks.enqueuePending(w.callbackQueue)
            },
            signal,
          ),
      })
      .leaderOnly({
        name: 'runner pools',
        run: (signal) => {
          if (!w.pools) return
          const pools = w.pools
          pools.lead(signal)
          return every(5_000, () => void pools.sync().catch(warnOnFailure('runner pool upkeep')), signal)
        },
      })
      .leaderOnly({
        name: 'sweeps',
        run: (signal) =>
          every(
            w.sweepMs,
            () => {
              for (const s of w.sweeps) void s.sweep().catch(warnOnFailure(s.name))
            },
            signal,
          ),
      })
      // Leading starts after the caches synced, so a live job is never taken for lost.
      .leaderOnly({
        name: 'lost hand-offs',
        run: (signal) =>
          every(30_000, () => void w.failLostHandoffs().catch(warnOnFailure('checking for lost hand-offs')), signal),
      })
      .leaderOnly({
        name: 'queued counts',
        run: (signal) =>
          every(RECOUNT_MS, () => void w.recountQueued().catch(warnOnFailure('recounting queued jobs')), signal),
      })
      .leaderOnly({
        name: 'reconciler',
        run: drained(w.queue, (key) => (w.fence(), w.reconciler.reconcile(key)), w.concurrency, 'reconcile'),
      })
      // Callbacks run on their own queue: a receiver that is slow to answer never holds up reconciles.
      .leaderOnly({
        name: 'callbacks',
        run: drained(
          w.callbackQueue,
          (key) => (w.fence(), w.callbacks.reconcile(key)),
          w.callbackConcurrency,
          'callback pass',
        ),
      })
  )
}
