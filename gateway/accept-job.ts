import type { Client } from 'minio'
import type { Logger } from 'pino'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import type { JobRecord } from '../contract/job-view.js'
import { writeJsonObject } from '../contract/storage-client.js'
import { ApiError } from './api-error.js'
import type { JobRecords } from './job-records.js'
import type { JobStore } from './job-store.js'
import type { GatewayMetrics } from './metrics.js'

export interface AcceptDeps {
  records: JobRecords
  store: JobStore
  storage: Client
  bucket: string
  metrics: GatewayMetrics
  log: Logger
}

export type Accepted = { kind: 'created'; job: UtilityJobResource } | { kind: 'existing'; job: JobRecord }

/**
 * The one way a job comes to be, for API keys and the console playground alike: its input in
 * storage, then its row in the job record (the job exists once that commits, and holds its
 * Idempotency-Key), then its UtilityJob. A UtilityJob that cannot be created fails the row, so no
 * job is ever left queued without one.
 */
export async function acceptJob(d: AcceptDeps, uj: UtilityJobResource, input: unknown): Promise<Accepted> {
  await writeJsonObject(d.storage, d.bucket, uj.spec.inputKey, input)
  const accepted = await d.records.accept(uj)
  if (accepted.kind === 'over_ceiling') {
    const message =
      accepted.scope === 'key'
        ? `This API key already has ${accepted.queued} jobs waiting to start, the most it may have queued; send more once some have started.`
        : 'The service has as many jobs waiting to start as it takes; send this one again shortly.'
    throw new ApiError('rate_limited', message, undefined, { 'Retry-After': accepted.scope === 'key' ? '5' : '10' })
  }
  if (accepted.kind === 'existing') {
    const holder = await d.records.find(accepted.jobId)
    if (!holder) throw new Error(`idempotency key held by ${accepted.jobId}, which has no record`)
    return { kind: 'existing', job: holder }
  }
  let created: UtilityJobResource
  try {
    created = await d.store.create(uj)
  } catch (err) {
    await d.records.failUnstarted(uj).catch((e) => d.log.error({ err: e, jobId: uj.spec.jobId }, 'recording an unstarted job failed'))
    throw err
  }
  d.metrics.jobsCreated.inc({ utility: uj.spec.utility, mode: uj.spec.mode })
  return { kind: 'created', job: created }
}
