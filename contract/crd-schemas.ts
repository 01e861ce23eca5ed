import type { V1ObjectMeta } from '@kubernetes/client-node'
import Type, { type Static } from 'typebox'
import { FreeObject, Nullable } from './schema-helpers.js'
import { SEALED_INPUT_MAX_CHARS } from './runner-protocol.js'

/**
 * Schemas of dutil's custom resources. The CRD manifests in crds/ are generated from these
 * (runners/generate-documents.ts) and checked for drift by a test.
 */

export const JobModeSchema = Type.Union([Type.Literal('sync'), Type.Literal('async')])
export type JobMode = Static<typeof JobModeSchema>

export const JobStateSchema = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
])
export type JobState = Static<typeof JobStateSchema>
export const JOB_STATES: readonly JobState[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled']
export const TERMINAL_STATES: readonly JobState[] = ['succeeded', 'failed', 'cancelled']

/** How a job was started: with an API key, or from the console playground (no key). */
export type JobSource = 'api' | 'playground'

export const UtilityJobSpecSchema = Type.Object({
  jobId: Type.String({ description: 'Public id, job_ + ULID.' }),
  utility: Type.String(),
  mode: JobModeSchema,
  apiKeyId: Type.String({ description: 'The key that started the job; empty for console playground runs.' }),
  apiKeyName: Type.String({ description: 'The key name at the time; empty for console playground runs.' }),
  source: Type.Optional(
    Type.Union([Type.Literal('api'), Type.Literal('playground')], {
      description: 'How the job was started; absent means api.',
    }),
  ),
  userEmail: Type.Optional(Type.String({ description: 'The console user who ran it from the playground.' })),
  owner: Type.Optional(
    Type.String({
      maxLength: 300,
      description:
        "Whose job it is for fair shares and queued ceilings: owner:<name> (a person, by e-mail, or an owner the key names) or key:<keyId> (a key of its own). Absent on jobs accepted before owners: the key's, or the playground person's.",
    }),
  ),
  createdAt: Type.String({ description: 'Accept time, ISO-8601 with milliseconds.' }),
  inputKey: Type.String({ description: 'Storage key of the input document written by the gateway.' }),
  metadata: Nullable(FreeObject()),
  callbackUrl: Type.Optional(Type.String({ maxLength: 2048 })),
  idempotencyKeyHash: Type.Optional(Type.String()),
  deadlineSeconds: Type.Optional(Type.Integer({ minimum: 1, description: 'Shorter time limit (test hook only).' })),
  storageInputKeys: Type.Optional(
    Type.Array(Type.String({ maxLength: 1024 }), {
      maxItems: 500,
      description:
        "Object keys of the s3:// inputs (the caller's own outputs, checked by the gateway): the runner's storage credentials may read these too.",
    }),
  ),
  inputSealed: Type.Optional(
    Type.Boolean({
      description:
        "The stored input holds sealed secrets (passwords): the operator hands the job's runner the key that opens them, and removes the stored input when the job goes.",
    }),
  ),
  sealedInput: Type.Optional(
    Type.String({
      maxLength: SEALED_INPUT_MAX_CHARS,
      description:
        "A small job's whole input, sealed with the job's own key (AES-256-GCM): it rides with the job to its runner instead of being stored in the bucket. Only the job's runner opens it.",
    }),
  ),
  cancelRequested: Type.Optional(
    Type.Boolean({
      description: 'Set by the gateway on POST /cancel; the operator cancels the job if it is still queued.',
    }),
  ),
})
export type UtilityJobSpec = Static<typeof UtilityJobSpecSchema>

export const StoredFileSchema = Type.Object({
  key: Type.String(),
  name: Type.String(),
  size: Nullable(Type.Integer()),
  contentType: Nullable(Type.String()),
  pageNumber: Type.Optional(Type.Integer()),
  path: Type.Optional(Type.String()),
})

export const TimingsSchema = Type.Object({
  queueMs: Nullable(Type.Integer()),
  upstreamMs: Nullable(Type.Integer()),
  storageMs: Nullable(Type.Integer()),
  totalMs: Nullable(Type.Integer()),
})
export type Timings = Static<typeof TimingsSchema>

export const JobErrorSchema = Type.Object({
  code: Type.String(),
  message: Type.String(),
  upstreamStatus: Type.Optional(Type.Integer()),
})
export type JobError = Static<typeof JobErrorSchema>

export const CallbackStatusSchema = Type.Union([
  Type.Literal('pending'),
  Type.Literal('delivered'),
  Type.Literal('failed'),
])
export type CallbackStatus = Static<typeof CallbackStatusSchema>

/**
 * Delivery bookkeeping of a job's signed callback, written only by the operator's callback
 * controller (the job reconciler never touches it). Unlike the rest of the status it cannot be
 * rebuilt from the state of the world: how many attempts were made and when the next one is
 * due exist nowhere else. It lives in the status so that an operator restart neither loses an
 * attempt nor makes one early; every write carries the object's resourceVersion, so an attempt
 * is claimed by exactly one writer before it is sent.
 */
export const CallbackDeliverySchema = Type.Object({
  status: CallbackStatusSchema,
  attempts: Type.Integer({ minimum: 0, description: 'Attempts made (or claimed) so far.' }),
  nextAttemptAt: Nullable(Type.String({ description: 'When the next attempt is due; null once delivered or failed.' })),
  lastAttemptAt: Nullable(Type.String()),
  lastStatusCode: Nullable(Type.Integer({ description: 'HTTP status of the last answered attempt.' })),
  lastError: Nullable(Type.String({ description: 'Why the last attempt failed; null after a delivery.' })),
  finishedAt: Nullable(Type.String({ description: 'When the callback was delivered or given up.' })),
  round: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'Delivery round: 1, then one more per redelivery (attempts count from 0 in each).',
    }),
  ),
  redeliveryRequestedAt: Type.Optional(
    Type.String({ description: 'The redelivery request (annotation dutil.io/redeliver) this round answers.' }),
  ),
})
export type CallbackDelivery = Static<typeof CallbackDeliverySchema>

/**
 * One callback attempt as the delivery log keeps it (the job record's `callback_log`): what it
 * got back, how long it took, and what happened next.
 */
export interface CallbackAttemptEntry {
  round: number
  attempt: number
  at: string
  durationMs: number
  outcome: 'delivered' | 'retrying' | 'failed'
  statusCode: number | null
  /** http_status, timeout, connection, refused_destination, unresolved, no_secret or internal; null when delivered. */
  errorClass: string | null
  error: string | null
  nextAttemptAt: string | null
}

/**
 * How far a running job has got, as its runner reported it (utilities with a
 * `runner.progressUnit`). Kept in the status once the job finishes: a failed job shows where it
 * stopped; a succeeded one shows the whole amount.
 */
export const JobProgressSchema = Type.Object({
  done: Type.Integer({ minimum: 0 }),
  total: Nullable(Type.Integer({ minimum: 0 })),
  unit: Type.String({ description: 'pages, entries or files.' }),
  updatedAt: Type.String({ description: 'When the runner reported it.' }),
  summary: Type.String({ description: 'For kubectl: "120/500 pages".' }),
})
export type JobProgress = Static<typeof JobProgressSchema>

/** The job's story as Kubernetes conditions (metav1.Condition), for `kubectl wait --for=condition=…`. */
export const CONDITION_TYPES = ['Admitted', 'Running', 'Succeeded', 'Failed'] as const
export type ConditionType = (typeof CONDITION_TYPES)[number]

export const ConditionSchema = Type.Object({
  type: Type.String({ description: 'Admitted, Running, Succeeded or Failed.', maxLength: 316 }),
  status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')]),
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
  lastTransitionTime: Type.String({ format: 'date-time', description: 'When the status last changed.' }),
  reason: Type.String({ maxLength: 1024, minLength: 1, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
  message: Type.String({ maxLength: 32768 }),
})
export type Condition = Static<typeof ConditionSchema>

export const UtilityJobStatusSchema = Type.Object({
  state: JobStateSchema,
  startedAt: Nullable(Type.String()),
  finishedAt: Nullable(Type.String()),
  timings: TimingsSchema,
  result: Nullable(
    Type.Object({
      files: Type.Array(StoredFileSchema),
      extras: FreeObject(),
      filesOmitted: Type.Optional(
        Type.Integer({
          minimum: 1,
          description:
            'Output files left out of this status to keep the object small; every file is in the job record (and the result manifest).',
        }),
      ),
    }),
  ),
  error: Nullable(JobErrorSchema),
  jobName: Type.Optional(Type.String({ description: 'The batch/v1 Job running this utility job.' })),
  runnerPod: Type.Optional(
    Type.String({ description: 'The pool pod running this utility job (pool mode, instead of a batch Job).' }),
  ),
  observedGeneration: Type.Optional(Type.Integer()),
  callback: Type.Optional(CallbackDeliverySchema),
  progress: Type.Optional(JobProgressSchema),
  conditions: Type.Optional(
    Type.Array(ConditionSchema, {
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      maxItems: 8,
    }),
  ),
})
export type UtilityJobStatus = Static<typeof UtilityJobStatusSchema>

export const ApiKeySpecSchema = Type.Object({
  keyId: Type.String({ description: 'Public id, key_ + ULID.' }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  prefix: Type.String({ description: 'First 16 characters of the key, for recognition.' }),
  hash: Type.String({
    pattern: '^[0-9a-f]{64}$',
    description: 'SHA-256 of the key, hex. The key itself is never stored.',
  }),
  utilities: Type.Array(Type.String(), {
    description: 'Allowed utility slugs; ["*"] means all, including later ones.',
  }),
  rateLimitPerMinute: Type.Integer({ minimum: 1 }),
  createdAt: Type.String(),
  expiresAt: Nullable(Type.String()),
  revokedAt: Nullable(Type.String()),
  signingSecretName: Type.String({
    description:
      'Secret holding the whsec_ callback signing secret, as the entry named after this ApiKey (dutil-signing-secrets).',
  }),
  createdBy: Type.Optional(
    Type.Object(
      { userId: Type.String(), email: Type.String() },
      { description: 'The console user who created the key; absent for keys made with the CLI.' },
    ),
  ),
  owner: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[^\\s:]+$',
      description:
        "Who the key's jobs count against (fair shares and queued ceilings), with the other keys and playground runs of the same owner; a person is named by their e-mail. Absent: the console user who created the key, else the key alone.",
    }),
  ),
})
export type ApiKeySpec = Static<typeof ApiKeySpecSchema>

export const ApiKeyStatusSchema = Type.Object({
  lastUsedAt: Nullable(Type.String({ description: 'Last authenticated request, updated at most once a minute.' })),
})
export type ApiKeyStatus = Static<typeof ApiKeyStatusSchema>

export type ObjectMeta = V1ObjectMeta & { name: string }

export interface UtilityJobResource {
  apiVersion: string
  kind: 'UtilityJob'
  metadata: ObjectMeta
  spec: UtilityJobSpec
  status?: UtilityJobStatus
}

export interface ApiKeyResource {
  apiVersion: string
  kind: 'ApiKey'
  metadata: ObjectMeta
  spec: ApiKeySpec
  status?: ApiKeyStatus
}
