import type { Client } from 'minio'
import type { Logger } from 'pino'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { type JobRecord, traceparentOfJob } from '../contract/job-view.js'
import { objectNameOf } from '../contract/ids.js'
import { INLINE_INPUT_MAX_BYTES, MAX_INPUT_BYTES } from '../contract/runner-protocol.js'
import { apiStatus } from '../platform/kube.js'
import { readJsonObject, writeJsonText } from '../platform/storage-client.js'
import { assertStorageInputsReadable } from './storage-inputs.js'
import { ApiError, invalid } from './api-error.js'
import { GrantRefused, storageGrant } from '../contract/storage-grant.js'
import { utilityJobResource } from './utility-job.js'
import type { JobRecords } from './job-records.js'
import type { JobReader } from './job-reader.js'
import type { UtilityJobClient } from '../platform/utility-job-client.js'
import type { GatewayMetrics } from './metrics.js'
import type { Uploads } from './uploads.js'
import { catalog } from '../runners/catalog.js'
import { secretPathsOf, type SecretPath } from '../contract/secret-fields.js'
import { isSealed, jobSealKey, openDocument, sealDocument, sealInput } from '../platform/sealed-input.js'
import type { InputSealingKey } from '../platform/input-sealing-key.js'

export interface AcceptDeps {
  records: JobRecords
  reader: JobReader
  jobs: UtilityJobClient
  storage: Client
  bucket: string
  metrics: GatewayMetrics
  log: Logger
  /** The uploads its s3:// inputs may name (checked again when a lost hand-off completes). */
  uploads?: Pick<Uploads, 'find'>
  /** The installation's key that a job's secret input fields (passwords) are sealed with (docs/adr/0042). */
  sealing: Pick<InputSealingKey, 'key' | 'operatorTakesSealedInputs'>
}

/** Each utility's secret input fields, found once from its schema. */
const SECRET_PATHS: ReadonlyMap<string, SecretPath[]> = new Map(
  [...catalog.values()].map((u) => [u.slug, secretPathsOf(u.inputSchema)]),
)

/** The installation's sealing key, or the 500 that asks the caller to try again (nothing was accepted). */
function installationKeyOf(d: Pick<AcceptDeps, 'sealing'>): () => Promise<Buffer> {
  return () =>
    d.sealing.key().catch((err: unknown) => {
      throw new ApiError(
        'internal',
        'The key that keeps job inputs sealed is not available right now; nothing was accepted, retry shortly.',
        undefined,
        { 'Retry-After': '2' },
        err,
      )
    })
}

/**
 * Where the job's input goes, and in what form: its secrets sealed with the job's own key (the
 * job marked so its runner is given that key: a password is never stored or handed to anything
 * but the runner in the clear, docs/adr/0042); then, when it is small, the whole of it sealed into
 * the UtilityJob (`sealedInput`, docs/adr/0043), which carries it to the runner and into the job's
 * row, with nothing written to storage (`stored` absent), once the operator's leader said it runs
 * such jobs. A larger input is stored in the bucket.
 */
async function placedInput(
  d: Pick<AcceptDeps, 'sealing'>,
  uj: UtilityJobResource,
  input: unknown,
): Promise<{ uj: UtilityJobResource; stored?: string }> {
  const installationKey = installationKeyOf(d)
  const jobId = uj.spec.jobId
  const { stored, sealed } = await sealInput(input, SECRET_PATHS.get(uj.spec.utility) ?? [], installationKey, jobId)
  // Serialised once: its size decides where it goes, and the text is what is sealed or stored.
  const json = JSON.stringify(stored)
  if (Buffer.byteLength(json) <= INLINE_INPUT_MAX_BYTES && (await d.sealing.operatorTakesSealedInputs())) {
    const sealedInput = sealDocument(json, jobSealKey(await installationKey(), jobId), jobId)
    return { uj: { ...uj, spec: { ...uj.spec, sealedInput } } }
  }
  return sealed ? { uj: { ...uj, spec: { ...uj.spec, inputSealed: true } }, stored: json } : { uj, stored: json }
}

export type Accepted = { kind: 'created'; job: UtilityJobResource } | { kind: 'existing'; job: JobRecord }

/**
 * The one way a job comes to be, for API keys and the console playground alike: its row in the
 * job record, decided first (the queued ceilings, the Idempotency-Key), with its input written to
 * storage before that commits (the job exists once it does, and holds its Idempotency-Key), then
 * its UtilityJob. A refused request stores nothing. A UtilityJob that cannot be created fails
 * the row, so no job is ever left queued without one.
 */
export async function acceptJob(d: AcceptDeps, given: UtilityJobResource, input: unknown): Promise<Accepted> {
  assertGrantable(given, d.bucket)
  const { uj, stored } = await placedInput(d, given, input)
  const accepted = await d.records.accept(uj, async () => {
    if (stored === undefined) return
    try {
      await writeJsonText(d.storage, d.bucket, uj.spec.inputKey, stored)
    } catch (err) {
      // A storage failure, not the database's: the transaction rolls back, nothing is accepted,
      // and the caller may send the same request again.
      throw new ApiError(
        'internal',
        'Storage could not take the job right now; nothing was accepted, retry shortly.',
        undefined,
        { 'Retry-After': '2' },
        err,
      )
    }
  })
  if (accepted.kind === 'over_ceiling') {
    const message = {
      key: `This API key already has ${accepted.queued} jobs waiting to start, the most it may have queued; send more once some have started.`,
      owner: `Your keys and playground runs together already have ${accepted.queued} jobs waiting to start, the most one owner may have queued; send more once some have started.`,
      platform: 'The service has as many jobs waiting to start as it takes; send this one again shortly.',
    }[accepted.scope]
    throw new ApiError('rate_limited', message, undefined, {
      'Retry-After': accepted.scope === 'platform' ? '10' : '5',
    })
  }
  if (accepted.kind === 'existing') {
    const holder = await d.reader.find(accepted.jobId)
    if (!holder) throw new Error(`idempotency key held by ${accepted.jobId}, which has no record`)
    return { kind: 'existing', job: holder }
  }
  let created: UtilityJobResource
  try {
    created = await createOnce(d, uj)
  } catch (err) {
    if (uj.spec.idempotencyKeyHash && transient(err)) {
      // Kept queued: the client's retry with the same Idempotency-Key hands it over
      // (completeHandOff); the operator's upkeep fails it if no retry comes.
      throw new ApiError(
        'internal',
        'The job is recorded but the cluster could not take it yet; send the request again with the same Idempotency-Key.',
        undefined,
        { 'Retry-After': '2' },
        err,
      )
    }
    // Without an Idempotency-Key a retry is another job: this one fails now, as the answer says.
    await d.records
      .failUnstarted(uj)
      .catch((e) => d.log.error({ err: e, jobId: uj.spec.jobId }, 'recording an unstarted job failed'))
    throw err
  }
  d.metrics.jobsCreated.inc({ utility: uj.spec.utility, mode: uj.spec.mode })
  return { kind: 'created', job: created }
}

/**
 * The runner's storage grant is decided here, before anything is stored: one that storage would
 * refuse is a 400, never a job that waits for a grant that cannot come (contract/storage-grant.ts).
 */
function assertGrantable(uj: UtilityJobResource, bucket: string): void {
  try {
    storageGrant(uj.spec, bucket)
  } catch (err) {
    if (!(err instanceof GrantRefused)) throw err
    throw invalid(`The job's s3:// inputs cannot be granted to its runner: ${err.message}`, [
      { path: 'input', message: err.message },
    ])
  }
}

/** The API server did not answer, or answered that it cannot right now: worth another try. */
function transient(err: unknown): boolean {
  const status = apiStatus(err)
  return status === undefined || status === 429 || status >= 500
}

/** How long one request keeps trying to hand its job to an API server that does not answer. */
const CREATE_RETRY_MS = 8000

/**
 * Creates the UtilityJob, trying again for a few seconds while the API server is unreachable (a
 * restart); one that exists already under its name (a hand-off completed meanwhile) is the same job.
 */
async function createOnce(d: AcceptDeps, uj: UtilityJobResource): Promise<UtilityJobResource> {
  const giveUpAt = Date.now() + CREATE_RETRY_MS
  for (let pause = 250; ; pause = Math.min(2000, pause * 2)) {
    try {
      return await d.jobs.create(uj)
    } catch (err) {
      if (apiStatus(err) === 409) {
        const existing = await d.jobs.get(uj.metadata.name)
        if (existing?.spec.jobId !== uj.spec.jobId) throw err
        return existing
      }
      if (!transient(err) || Date.now() + pause > giveUpAt) throw err
      await new Promise((r) => setTimeout(r, pause))
    }
  }
}

/**
 * A queued job whose UtilityJob never came (its gateway died between writing the row and the
 * UtilityJob) is handed to the cluster now, from its row and the input it stored first: a client
 * retrying with its Idempotency-Key gets its job run, not one the upkeep fails minutes later.
 * Any other job is returned as it is.
 */
export async function completeHandOff(
  d: AcceptDeps,
  job: JobRecord,
  keyObjectName: string,
): Promise<JobRecord | UtilityJobResource> {
  if (job.status?.state !== undefined && job.status.state !== 'queued') return job
  const name = objectNameOf(job.spec.jobId)
  const live = await d.jobs.get(name)
  if (live) return live
  // The input is what the job was accepted with (sealed in its row, or stored); its s3:// inputs
  // are checked again.
  const jobId = job.spec.jobId
  const input = job.spec.sealedInput
    ? openDocument(job.spec.sealedInput, jobSealKey(await installationKeyOf(d)(), jobId), jobId)
    : await readJsonObject<unknown>(d.storage, d.bucket, job.spec.inputKey, MAX_INPUT_BYTES)
  const storageInputKeys = await assertStorageInputsReadable(input, {
    bucket: d.bucket,
    find: (id) => d.reader.find(id),
    owns: (other) => other.spec.apiKeyId === job.spec.apiKeyId,
    upload: (id) => d.uploads?.find(job.spec.apiKeyId, id) ?? Promise.resolve(undefined),
  })
  const uj = utilityJobResource(
    {
      ...job.spec,
      ...(storageInputKeys.length ? { storageInputKeys } : {}),
      ...(!job.spec.sealedInput && isSealed(input) ? { inputSealed: true } : {}),
    },
    keyObjectName,
    traceparentOfJob(job),
  )
  const created = await createOnce(d, uj)
  d.log.warn({ jobId: job.spec.jobId }, 'job handed to the cluster on its retry (its first hand-off was lost)')
  d.metrics.jobsCreated.inc({ utility: uj.spec.utility, mode: uj.spec.mode })
  return created
}
