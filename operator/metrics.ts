import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { traceIdOfJob } from '../contract/job-view.js'
import { exemplarHistogram, exemplarOf, MetricsExposition } from '../platform/metrics-exposition.js'
import type { UtilityJobResource, UtilityJobStatus } from '../contract/crd-schemas.js'

export function operatorMetrics() {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return {
    registry,
    exposition: new MetricsExposition(registry),
    runnerGrants: new Counter({
      name: 'dutil_runner_storage_grants_total',
      help: 'Storage grants handed to runners: scope "job" (one job\'s, asked of STS) or "tenant" (a tenant\'s, for its pool pods), source "issued" (asked of STS) or "reused".',
      labelNames: ['scope', 'source'],
      registers: [registry],
    }),
    reconcileErrors: new Counter({
      name: 'dutil_operator_reconcile_errors_total',
      help: 'Reconcile passes that failed and were requeued.',
      registers: [registry],
    }),
    queuedCountsDrift: new Gauge({
      name: 'dutil_queued_counts_drift',
      help: 'How far the kept counts of queued jobs (ceilings) were from the queued rows at the last recount: the sum of each count’s difference, corrected then.',
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'dutil_operator_queue_depth',
      help: 'Keys waiting in the work queue.',
      registers: [registry],
    }),
    jobsFinished: new Counter({
      name: 'dutil_jobs_finished_total',
      help: 'Utility jobs that reached a terminal state.',
      labelNames: ['utility', 'status', 'error_code'],
      registers: [registry],
    }),
    // The job-duration histograms keep, per bucket, the trace of a job that fell in it.
    runnerSeconds: exemplarHistogram(registry, {
      name: 'dutil_runner_duration_seconds',
      help: 'Time from start to finish of a utility run.',
      labelNames: ['utility'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900],
    }),
    queueSeconds: exemplarHistogram(registry, {
      name: 'dutil_job_queue_seconds',
      help: 'Time from accept until a runner started.',
      labelNames: ['utility'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60],
    }),
    jobsQueued: new Gauge({
      name: 'dutil_jobs_queued',
      help: 'Unfinished jobs waiting for admission (no batch Job yet), by utility.',
      labelNames: ['utility'],
      registers: [registry],
    }),
    jobsRunning: new Gauge({
      name: 'dutil_jobs_running',
      help: 'Unfinished jobs holding an admission slot (a batch Job), by utility.',
      labelNames: ['utility'],
      registers: [registry],
    }),
    admissionWaitSeconds: new Histogram({
      name: 'dutil_admission_wait_seconds',
      help: 'Time from accept until admission let the job start (its batch Job is made).',
      labelNames: ['utility'],
      buckets: [0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
      registers: [registry],
    }),
    callbackAttempts: new Counter({
      name: 'dutil_callback_attempts_total',
      help: 'Callback delivery attempts by event and outcome (delivered, failed, refused).',
      labelNames: ['event', 'outcome'],
      registers: [registry],
    }),
    callbackAttemptSeconds: exemplarHistogram(registry, {
      name: 'dutil_callback_attempt_duration_seconds',
      help: 'Time one callback attempt took, from the destination check to the answer (or timeout).',
      labelNames: ['outcome'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
    }),
    callbacksFinished: new Counter({
      name: 'dutil_callbacks_finished_total',
      help: 'Callbacks that reached a final state (delivered, or failed after the last attempt or a refused destination).',
      labelNames: ['event', 'status'],
      registers: [registry],
    }),
    callbackQueueDepth: new Gauge({
      name: 'dutil_callback_queue_depth',
      help: 'Callbacks waiting for a free delivery worker.',
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'dutil_operator_leader',
      help: '1 while this replica holds the leader lease and runs the reconcilers, else 0.',
      registers: [registry],
    }),
    retentionDeletedJobs: new Counter({
      name: 'dutil_retention_deleted_jobs_total',
      help: 'Finished UtilityJobs deleted (with their files) after the retention period.',
      registers: [registry],
    }),
    retentionDeletedObjects: new Counter({
      name: 'dutil_retention_deleted_objects_total',
      help: 'Storage objects deleted by retention (job files and orphans).',
      registers: [registry],
    }),
  }
}

export type OperatorMetrics = ReturnType<typeof operatorMetrics>

/** A finished job in the metrics: its outcome, its time queued and its time in the runner. */
export function observeFinished(metrics: OperatorMetrics, uj: UtilityJobResource, status: UtilityJobStatus): void {
  const utility = uj.spec.utility
  metrics.jobsFinished.inc({ utility, status: status.state, error_code: status.error?.code ?? '' })
  const t = status.timings
  const exemplarLabels = exemplarOf(traceIdOfJob(uj))
  if (t.queueMs !== null) metrics.queueSeconds.observe({ labels: { utility }, value: t.queueMs / 1000, exemplarLabels })
  if (t.totalMs !== null && t.queueMs !== null)
    metrics.runnerSeconds.observe({ labels: { utility }, value: (t.totalMs - t.queueMs) / 1000, exemplarLabels })
}
