import { API_GROUP, API_KEY, API_VERSION, UTILITY_JOB } from './api-group.js'
import {
  CONSOLE_INVITE,
  CONSOLE_USER,
  ConsoleInviteSpecSchema,
  ConsoleUserSpecSchema,
  ConsoleUserStatusSchema,
} from './console-resources.js'
import { ApiKeySpecSchema, ApiKeyStatusSchema, UtilityJobSpecSchema, UtilityJobStatusSchema } from './crd-schemas.js'

/**
 * The structural-schema form of a TypeBox schema: unions of literals become enums (CRDs have
 * no `const` and allow no types inside anyOf) and `additionalProperties: false` beside
 * `properties` is left to pruning, which Kubernetes requires.
 */
export function structural(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(structural)
  if (schema === null || typeof schema !== 'object') return schema
  const node = { ...(schema as Record<string, unknown>) }
  const anyOf = node.anyOf as Array<Record<string, unknown>> | undefined
  if (anyOf && anyOf.length > 0 && anyOf.every((b) => 'const' in b)) {
    delete node.anyOf
    node.type = typeof anyOf[0].const
    node.enum = anyOf.map((b) => b.const)
  }
  if (node.properties && node.additionalProperties === false) delete node.additionalProperties
  for (const [k, v] of Object.entries(node)) node[k] = structural(v)
  return node
}

const plain = structural

interface ResourceSchema {
  description: string
  /** Structural schema of spec. */
  spec: unknown
  /** Structural schema of status; given, the resource gets a status subresource. */
  status?: unknown
}

function crd(
  names: { kind: string; plural: string; singular: string; shortNames: readonly string[] },
  resource: ResourceSchema,
  printerColumns: object[],
) {
  const withStatus = resource.status !== undefined
  const schema = {
    type: 'object',
    description: resource.description,
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: resource.spec,
      ...(withStatus ? { status: resource.status } : {}),
    },
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${names.plural}.${API_GROUP}`, labels: { 'app.kubernetes.io/part-of': 'dutil' } },
    spec: {
      group: API_GROUP,
      scope: 'Namespaced',
      names: {
        kind: names.kind,
        plural: names.plural,
        singular: names.singular,
        shortNames: [...names.shortNames],
        categories: ['dutil'],
      },
      versions: [
        {
          name: API_VERSION,
          served: true,
          storage: true,
          ...(withStatus ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: printerColumns,
          schema: { openAPIV3Schema: schema },
        },
      ],
    },
  }
}

/** UtilityJob spec fields beside the always-present ones that never change once the job exists. */
const UNCHANGEABLE_WHEN_SET = [
  'apiKeyName',
  'owner',
  'source',
  'userEmail',
  'metadata',
  'callbackUrl',
  'idempotencyKeyHash',
  'deadlineSeconds',
  'storageInputKeys',
] as const

/** CEL: the field is present in both or neither (a null counts as absent), with the same value. */
function unchanged(field: string): string {
  return `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`
}

/** The CustomResourceDefinitions, generated from the TypeBox schemas (see crds/). */
export function crdManifests() {
  const utilityJob = crd(
    UTILITY_JOB,
    {
      description:
        'One run of a document utility, created by the dutil gateway and run by the operator as a batch/v1 Job.',
      spec: {
        ...(plain(UtilityJobSpecSchema) as object),
        'x-kubernetes-validations': [
          {
            rule: 'self.jobId == oldSelf.jobId && self.utility == oldSelf.utility && self.mode == oldSelf.mode && self.apiKeyId == oldSelf.apiKeyId && self.createdAt == oldSelf.createdAt && self.inputKey == oldSelf.inputKey',
            message: 'spec is immutable except cancelRequested',
          },
          {
            rule: '!has(oldSelf.cancelRequested) || !oldSelf.cancelRequested || (has(self.cancelRequested) && self.cancelRequested)',
            message: 'cancelRequested cannot be taken back',
          },
          // The fields that may be absent: neither added, removed nor changed (one rule each, so
          // each stays within the API server's cost budget).
          ...UNCHANGEABLE_WHEN_SET.map((f) => ({
            rule: unchanged(f),
            message: 'spec is immutable except cancelRequested',
          })),
        ],
      },
      status: plain(UtilityJobStatusSchema),
    },
    [
      { name: 'Job ID', type: 'string', jsonPath: '.spec.jobId' },
      { name: 'Utility', type: 'string', jsonPath: '.spec.utility' },
      { name: 'Mode', type: 'string', jsonPath: '.spec.mode' },
      { name: 'Status', type: 'string', jsonPath: '.status.state' },
      { name: 'Error', type: 'string', jsonPath: '.status.error.code', priority: 0 },
      { name: 'Progress', type: 'string', jsonPath: '.status.progress.summary' },
      { name: 'Duration-ms', type: 'integer', jsonPath: '.status.timings.totalMs' },
      { name: 'Key', type: 'string', jsonPath: '.spec.apiKeyName', priority: 1 },
      { name: 'Queue-ms', type: 'integer', jsonPath: '.status.timings.queueMs', priority: 1 },
      { name: 'Callback', type: 'string', jsonPath: '.status.callback.status', priority: 1 },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  )
  const apiKey = crd(
    API_KEY,
    {
      description: 'A dutil API key. Only the SHA-256 of the key is stored; the signing secret lives in a Secret.',
      spec: {
        ...(plain(ApiKeySpecSchema) as object),
        'x-kubernetes-validations': [
          {
            rule: '!has(oldSelf.revokedAt) || (has(self.revokedAt) && self.revokedAt == oldSelf.revokedAt)',
            message: 'revokedAt cannot be cleared or changed once set',
          },
          { rule: 'self.keyId == oldSelf.keyId && self.hash == oldSelf.hash', message: 'keyId and hash are immutable' },
        ],
      },
      status: plain(ApiKeyStatusSchema),
    },
    [
      { name: 'Key ID', type: 'string', jsonPath: '.spec.keyId' },
      { name: 'Name', type: 'string', jsonPath: '.spec.name' },
      { name: 'Prefix', type: 'string', jsonPath: '.spec.prefix' },
      { name: 'Rate', type: 'integer', jsonPath: '.spec.rateLimitPerMinute' },
      { name: 'Expires', type: 'string', jsonPath: '.spec.expiresAt' },
      { name: 'Revoked', type: 'string', jsonPath: '.spec.revokedAt' },
      { name: 'Last Used', type: 'date', jsonPath: '.status.lastUsedAt' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  )
  const consoleUser = crd(
    CONSOLE_USER,
    {
      description: 'A person who signs in to the dutil console. Password hash and TOTP secret live in a Secret.',
      spec: plain(ConsoleUserSpecSchema),
      status: plain(ConsoleUserStatusSchema),
    },
    [
      { name: 'Email', type: 'string', jsonPath: '.spec.email' },
      { name: 'Role', type: 'string', jsonPath: '.spec.role' },
      { name: 'Disabled', type: 'boolean', jsonPath: '.spec.disabled' },
      { name: '2FA', type: 'boolean', jsonPath: '.spec.totpEnabled' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  )
  const consoleInvite = crd(
    CONSOLE_INVITE,
    {
      description:
        'An open invite to the dutil console: single use, valid 7 days. Only the SHA-256 of the link token is stored.',
      spec: plain(ConsoleInviteSpecSchema),
    },
    [
      { name: 'Email', type: 'string', jsonPath: '.spec.email' },
      { name: 'Role', type: 'string', jsonPath: '.spec.role' },
      { name: 'Expires', type: 'string', jsonPath: '.spec.expiresAt' },
    ],
  )
  return {
    'utilityjobs.yaml': utilityJob,
    'apikeys.yaml': apiKey,
    'consoleusers.yaml': consoleUser,
    'consoleinvites.yaml': consoleInvite,
  }
}
