import { isJobErrorCode, type JobErrorCode } from './error-codes.js'

/**
 * How a runner pod talks to the operator. The pod gets only small references in its
 * environment; the job input (up to 500 zip entries with 4 KB URLs, over 2 MB) lives in
 * storage, because neither environment variables nor an etcd object can carry it.
 *
 * - input: sealed in the UtilityJob (`sealedInput`) when small, handed to the runner with its job
 *   (the Job's environment, the pool's hand-over); else `_jobs/<job_id>/input.json` in the
 *   bucket, written by the gateway before the job exists.
 * - result: `_jobs/<job_id>/result.json`, written by the runner after its outputs are stored.
 * - progress: `_jobs/<job_id>/progress.json` ({@link RunnerProgress}), rewritten by a long runner
 *   as it goes (at most once a second); the operator copies it into the status while it runs. The
 *   runner removes it once the result (which carries the last count) is stored or answered.
 * - failure: a one-line JSON {@link RunnerFailure} in the container's termination message,
 *   and an exit code that the Job's pod failure policy understands.
 */
export const ENV = {
  jobId: 'DUTIL_JOB_ID',
  utility: 'DUTIL_UTILITY',
  createdAt: 'DUTIL_JOB_CREATED_AT',
  bucket: 'DUTIL_S3_BUCKET',
  endpoint: 'DUTIL_S3_ENDPOINT',
  region: 'DUTIL_S3_REGION',
  accessKey: 'DUTIL_S3_ACCESS_KEY',
  secretKey: 'DUTIL_S3_SECRET_KEY',
  sessionToken: 'DUTIL_S3_SESSION_TOKEN',
  /** The key of the job's sealed input secrets (RunnerCredentials.sealKey). */
  sealKey: 'DUTIL_INPUT_SEAL_KEY',
  /** A small job's whole input, sealed (the UtilityJob's `sealedInput`). */
  sealedInput: 'DUTIL_INPUT_SEALED',
  allowLoopback: 'DUTIL_ALLOW_LOOPBACK_URLS',
  allowedNetworks: 'DUTIL_ALLOWED_PRIVATE_NETWORKS',
  /** The cluster's pod and Service ranges, refused like private ranges (comma-separated CIDRs). */
  clusterNetworks: 'DUTIL_CLUSTER_NETWORKS',
  /** The job's W3C trace context (docs/observability.md); set only when tracing is on. */
  traceparent: 'TRACEPARENT',
  tracingEndpoint: 'DUTIL_TRACING_ENDPOINT',
  tracingServiceName: 'DUTIL_TRACING_SERVICE_NAME',
} as const

/**
 * A runner's storage credentials: temporary (STS AssumeRole with a session policy, made by the
 * operator for this job alone), valid until shortly after the job's deadline. They read the
 * job's input and the outputs it chains from, write its outputs and result manifest, and
 * nothing else (docs/adr/0011-runner-storage-credentials.md).
 */
export interface RunnerCredentials {
  accessKey: string
  secretKey: string
  sessionToken: string
  expiresAt: string
  /**
   * The key that opens the job's sealed input secrets (base64url of 32 bytes), only for a job
   * whose input holds some (docs/adr/0042-sealed-input-secrets.md).
   */
  sealKey?: string
}

/**
 * The largest stored input (its JSON, in bytes) that rides with its job, sealed, instead of being
 * written to storage (docs/adr/0043): a URL and its options, a small page, a password. Larger
 * ones (a page of 8 KB or more, hundreds of zip entries) are stored at {@link inputObjectKey}.
 */
export const INLINE_INPUT_MAX_BYTES = 8 * 1024
/** The sealed form of such an input: version, nonce and base64url of the ciphertext and tag. */
export const SEALED_INPUT_MAX_CHARS = 3 + 16 + 1 + Math.ceil(((INLINE_INPUT_MAX_BYTES + 16) * 4) / 3)

export function inputObjectKey(jobId: string): string {
  return `_jobs/${jobId}/input.json`
}

/**
 * The most the operator reads of a runner's result manifest: 1,000 unzipped entries with long
 * names fit in a quarter of it. A larger one is refused (the job fails `internal`).
 */
export const MAX_RESULT_MANIFEST_BYTES = 4 * 1024 * 1024
/** The most the operator reads of a runner's progress report (a few numbers). */
export const MAX_PROGRESS_BYTES = 16 * 1024
/** The most the gateway reads back of a job input it stored itself (its request body's bound). */
export const MAX_INPUT_BYTES = 4 * 1024 * 1024

export function resultObjectKey(jobId: string): string {
  return `_jobs/${jobId}/result.json`
}

export function progressObjectKey(jobId: string): string {
  return `_jobs/${jobId}/progress.json`
}

/** How far a runner has got, in its utility's unit (`runner.progressUnit` in the catalog). */
export interface RunnerProgress {
  done: number
  /** The whole amount, once the runner knows it. */
  total: number | null
  /** When the runner wrote it (ISO 8601). */
  at: string
}

/**
 * Exit codes. Classified failures fail the Job at once; a transient one is retried like a crash,
 * but if the retries run out its termination message names the cause; anything else is a crash.
 */
export const EXIT = {
  ok: 0,
  rejected: 10,
  upstreamError: 11,
  storageError: 12,
  /** Our own storage was unreachable (e.g. reading the job's input): worth another try. */
  storageUnavailable: 13,
} as const

export const CLASSIFIED_EXIT_CODES = [EXIT.rejected, EXIT.upstreamError, EXIT.storageError]
export const TRANSIENT_EXIT_CODES = [EXIT.storageUnavailable]

export interface RunnerFailure {
  code: JobErrorCode
  message: string
  upstreamStatus?: number
}

/**
 * A runner's account of a failure as the operator takes it (a termination message in job mode,
 * a job state in pool mode), or null when `value` is not one: a known code, the message cut to
 * 2,000 characters, the upstream status only when it is a whole number.
 */
export function runnerFailureOf(value: unknown): RunnerFailure | null {
  const f = value as Partial<Record<keyof RunnerFailure, unknown>> | null
  if (!f || typeof f !== 'object' || !isJobErrorCode(f.code) || typeof f.message !== 'string') return null
  const out: RunnerFailure = { code: f.code, message: f.message.slice(0, 2000) }
  if (Number.isInteger(f.upstreamStatus)) out.upstreamStatus = f.upstreamStatus as number
  return out
}

/** A stored output file as the runner reports it; links are made by the gateway at read time. */
export interface StoredFile {
  key: string
  name: string
  size: number | null
  contentType: string | null
  pageNumber?: number
  path?: string
}

export interface RunnerResult {
  files: StoredFile[]
  extras: Record<string, number | string | boolean>
  startedAt: string
  upstreamMs: number
  storageMs: number
  /** The runner's last progress report, for utilities that count progress: the job's final progress. */
  progress?: RunnerProgress
}

/**
 * Pool mode (docs/adr/0026-runner-pools.md): a long-lived runner pod takes one job at a time from
 * the operator over HTTP on `port`. `POST /jobs` hands it a {@link PoolAssignment}; `GET
 * /jobs/<job_id>` tells the job's {@link PoolJobState} (with `?waitMs=<n>`, a running job's answer
 * waits until it ends or `n` ms pass, at most `maxWaitMs`); both need the pod's token as a bearer
 * token. `GET /healthz` (no token) answers 200 once the runner can take a job.
 */
export const POOL = {
  port: 8080,
  /** The pod's bearer token (made by the operator with the pod). */
  tokenEnv: 'DUTIL_POOL_TOKEN',
  /** The pod retires after this many jobs. */
  restartEveryEnv: 'DUTIL_POOL_RESTART_EVERY',
  /** A pod bound to a tenant retires after this many seconds without a job. */
  idleSecondsEnv: 'DUTIL_POOL_IDLE_SECONDS',
  /**
   * A pool pod's longest life (its activeDeadlineSeconds, so the runner ResourceQuota's
   * `Terminating` scope counts it like every runner pod). The runner takes no job in its last
   * hour, so no job runs into it.
   */
  maxLifeSeconds: 86_400,
  lastHourSeconds: 3_600,
  /** The most the runner reads of an assignment: its credentials and a sealed input (INLINE_INPUT_MAX_BYTES). */
  maxAssignmentBytes: 32 * 1024,
  /** The longest a state request waits for a running job to end. */
  maxWaitMs: 10_000,
  /** The most the operator reads of a job state. */
  maxStateBytes: 64 * 1024,
  /**
   * A succeeded job's result manifest up to this size comes with its state (`result`) instead of
   * being stored (docs/adr/0035); a larger one is stored, as in job mode.
   */
  maxAnsweredResultBytes: 48 * 1024,
} as const

/**
 * A pooled job whose runner went before the job finished (its pod deleted, evicted or crashed):
 * the runner says so itself when told to stop, the operator when it finds the pod gone. The job's
 * input was not to blame, so another try may succeed.
 */
export const POOL_RUNNER_LOST: RunnerFailure = {
  code: 'upstream_error',
  message: 'The runner stopped before the job finished; submitting it again may succeed.',
}

/** One job for a pool runner: what a job-mode runner reads from its environment. */
export interface PoolAssignment {
  jobId: string
  utility: string
  createdAt: string
  /** An opaque hash of the job's tenant: a pool pod serves the tenant of its first job, and no other. */
  tenant: string
  /** The job's time limit, counted by the runner from the assignment. */
  deadlineSeconds: number
  credentials: RunnerCredentials
  /** The job's input, sealed (the UtilityJob's `sealedInput`), when it rides with the job. */
  sealedInput?: string
}

export interface PoolJobState {
  jobId: string
  state: 'running' | 'succeeded' | 'failed'
  failure?: RunnerFailure
  /**
   * A succeeded job's result manifest, when the runner answers it rather than storing it. As the
   * operator reads it, unchecked: it comes from code that parsed hostile input.
   */
  result?: unknown
}
