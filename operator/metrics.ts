import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export function operatorMetrics() {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return {
    registry,
    reconcileErrors: new Counter({ name: 'dutil_operator_reconcile_errors_total', help: 'Reconcile passes that failed and were requeued.', registers: [registry] }),
    queueDepth: new Gauge({ name: 'dutil_operator_queue_depth', help: 'Keys waiting in the work queue.', registers: [registry] }),
    jobsFinished: new Counter({ name: 'dutil_jobs_finished_total', help: 'Utility jobs that reached a terminal state.', labelNames: ['utility', 'status', 'error_code'], registers: [registry] }),
    runnerSeconds: new Histogram({
      name: 'dutil_runner_duration_seconds',
      help: 'Time from start to finish of a utility run.',
      labelNames: ['utility'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900],
      registers: [registry],
    }),
    queueSeconds: new Histogram({
      name: 'dutil_job_queue_seconds',
      help: 'Time from accept until a runner started.',
      labelNames: ['utility'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60],
      registers: [registry],
    }),
  }
}

export type OperatorMetrics = ReturnType<typeof operatorMetrics>
