import { MAX_IDEMPOTENCY_KEY_LENGTH, MAX_REQUEST_ID_LENGTH } from './limits.js'
import { runRequestSchema } from './request-schemas.js'
import { RESPONSE_SCHEMAS } from './response-schemas.js'
import { JOB_STATES } from './crd-schemas.js'
import { CONTRACT_SLUGS, type UtilityDefinition } from './utility.js'

/** Turns TypeBox `$ref: 'Name'` into component references and drops `$id`s. */
function componentRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(componentRefs)
  if (schema === null || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$id') continue
    out[k] =
      k === '$ref' && typeof v === 'string' && !v.startsWith('#') ? `#/components/schemas/${v}` : componentRefs(v)
  }
  return out
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const json = (schema: object) => ({ 'application/json': { schema } })
const header = (description: string, schema: object = { type: 'string' }) => ({ description, schema })

const H = {
  requestId: header("Echoes the caller's X-Request-Id or a generated one."),
  limit: header('Requests allowed per minute for this key.', { type: 'integer' }),
  remaining: header('Requests left in the current window.', { type: 'integer' }),
  reset: header('Seconds until the window resets.', { type: 'integer' }),
  location: header('Path of the job: /v1/jobs/{id}.'),
  retryAfter: header('Seconds to wait before trying again.', { type: 'integer' }),
  replayed: header('Present (true) when an Idempotency-Key replay returned the original job.'),
  wwwAuth: header('Bearer challenge.'),
}

const authed = {
  'X-Request-Id': H.requestId,
  'RateLimit-Limit': H.limit,
  'RateLimit-Remaining': H.remaining,
  'RateLimit-Reset': H.reset,
}
const errorResponse = (description: string, headers: Record<string, object> = { 'X-Request-Id': H.requestId }) => ({
  description,
  headers,
  content: json(ref('Error')),
})
const ERR = {
  400: errorResponse('Invalid request (body, query or header); no job was created.'),
  401: errorResponse('Missing, unknown, revoked or expired API key.', {
    'X-Request-Id': H.requestId,
    'WWW-Authenticate': H.wwwAuth,
  }),
  403: errorResponse('The key may not call this utility.'),
  404: errorResponse("Not found (or not this key's)."),
  409: errorResponse('Conflict.'),
  429: errorResponse('Rate limit exceeded.', { ...authed, 'Retry-After': H.retryAfter }),
  500: {
    description: 'Unexpected failure (error.requestId matches the logs), or a lost job.',
    headers: { 'X-Request-Id': H.requestId },
    content: json({ oneOf: [ref('Error'), ref('Job')] }),
  },
}

const runHeaders = [
  {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: 'Retries with the same key return the original job.',
    schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
  },
  {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    schema: { type: 'string', minLength: 1, maxLength: MAX_REQUEST_ID_LENGTH, pattern: '^[\\x21-\\x7e]+$' },
  },
]

/**
 * The file in the request (docs/api.md): file parts, each stored as an upload of the caller, and
 * the rest of the request as fields.
 */
const multipartRun = {
  'multipart/form-data': {
    schema: {
      type: 'object',
      properties: {
        file: {
          description: 'The document (several for merge-pdf, in order; parts named file or files).',
          type: 'string',
          format: 'binary',
        },
        input: { type: 'string', description: 'JSON: the rest of the input (its options).' },
        metadata: { type: 'string', description: 'JSON: the job metadata.' },
        callbackUrl: { type: 'string', description: 'Async route only.' },
      },
      required: ['file'],
      additionalProperties: false,
    },
  },
}

function runOperations(utilities: readonly UtilityDefinition[]) {
  const paths: Record<string, object> = {}
  for (const u of utilities.filter((x) => x.enabled)) {
    const failed = (status: number, what: string) => ({
      description: `The job failed (${what}); the body is the failed job.`,
      headers: { 'X-Request-Id': H.requestId },
      content: json(ref('Job')),
    })
    paths[`/v1/utilities/${u.slug}`] = {
      post: {
        operationId: `run_${u.slug.replaceAll('-', '_')}`,
        summary: `Run ${u.name} and wait for the result (up to 90 s)`,
        description: `${u.description} Time limit ${u.maxDurationSeconds} s. With Prefer: respond-async it behaves as the async route.`,
        tags: ['run'],
        parameters: [
          ...runHeaders,
          { name: 'Prefer', in: 'header', required: false, schema: { type: 'string', enum: ['respond-async'] } },
        ],
        requestBody: { required: true, content: { ...json(runRequestSchema(u, 'sync')), ...multipartRun } },
        responses: {
          200: {
            description:
              "The job succeeded. With an Accept header that prefers its one file's type (Accept: application/pdf), the file's bytes, its job id in Dutil-Job-Id.",
            headers: { ...authed, 'Idempotent-Replayed': H.replayed },
            content: {
              ...json(ref('Job')),
              'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
            },
          },
          202: {
            description: 'Still running after 90 s (or Prefer: respond-async); poll Location.',
            headers: {
              ...authed,
              Location: H.location,
              'Retry-After': H.retryAfter,
              'Idempotent-Replayed': H.replayed,
            },
            content: json(ref('Job')),
          },
          ...ERR,
          422: failed(422, 'upstream_rejected'),
          502: failed(502, 'upstream_error or storage_error'),
          504: failed(504, 'upstream_timeout'),
        },
      },
    }
    paths[`/v1/utilities/${u.slug}/jobs`] = {
      post: {
        operationId: `start_${u.slug.replaceAll('-', '_')}`,
        summary: `Start ${u.name} as an async job`,
        description: `${u.description} Answers at once; fetch the job, long-poll with ?wait=, or give a callbackUrl.`,
        tags: ['run'],
        parameters: runHeaders,
        requestBody: { required: true, content: { ...json(runRequestSchema(u, 'async')), ...multipartRun } },
        responses: {
          202: {
            description: 'Queued.',
            headers: { ...authed, Location: H.location, 'Idempotent-Replayed': H.replayed },
            content: json(ref('Job')),
          },
          ...ERR,
        },
      },
    }
  }
  return paths
}

/** The Standard Webhooks headers of every callback attempt. */
const WEBHOOK_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    schema: { type: 'string' },
    description: 'The job id: the same on every retry (de-duplicate on it).',
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    schema: { type: 'string' },
    description: 'Unix seconds when this attempt was signed; refuse one older than about 5 minutes.',
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    schema: { type: 'string' },
    description:
      'Space-separated v1,<base64 HMAC-SHA256> over "<webhook-id>.<webhook-timestamp>.<raw body>", keyed with the base64-decoded part of the whsec_ secret after its prefix.',
  },
]

const pick = (...codes: Array<keyof typeof ERR>) => Object.fromEntries(codes.map((c) => [c, ERR[c]]))

/**
 * The OpenAPI 3.1 description of the utilities given (the catalog's, runners/catalog.ts), generated
 * from the same schemas the gateway validates with.
 */
export function openApiDocument(utilities: readonly UtilityDefinition[]): Record<string, unknown> {
  const slugs = utilities.filter((u) => u.enabled).map((u) => u.slug)
  const jobId = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'job_ + ULID' }
  const fileId = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'file_ + ULID' }
  return {
    openapi: '3.1.0',
    info: {
      title: 'dutil Document Utilities Job API',
      version: '1.0.0',
      description:
        'Run document utilities as jobs: sync, async with long-polling, or with signed callbacks. Changes within v1 are additive.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    tags: [{ name: 'run' }, { name: 'jobs' }, { name: 'files' }, { name: 'catalog' }],
    paths: {
      ...runOperations(utilities),
      '/v1/jobs': {
        get: {
          operationId: 'list_jobs',
          summary: "List this key's jobs, newest first",
          tags: ['jobs'],
          parameters: [
            { name: 'utility', in: 'query', schema: { type: 'string', enum: [...CONTRACT_SLUGS] } },
            { name: 'status', in: 'query', schema: { type: 'string', enum: [...JOB_STATES] } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 } },
            { name: 'cursor', in: 'query', schema: { type: 'string' }, description: "The previous page's nextCursor." },
          ],
          responses: {
            200: { description: 'A page of job summaries.', headers: authed, content: json(ref('JobList')) },
            ...pick(400, 401, 429, 500),
          },
        },
      },
      '/v1/jobs/{id}': {
        get: {
          operationId: 'get_job',
          summary: 'Get a job (long-poll with wait)',
          tags: ['jobs'],
          parameters: [
            jobId,
            {
              name: 'wait',
              in: 'query',
              schema: { type: 'integer', minimum: 0, maximum: 60, default: 0 },
              description: 'Seconds to wait for the job to finish.',
            },
          ],
          responses: {
            200: { description: 'The job, whatever its status.', headers: authed, content: json(ref('Job')) },
            ...pick(400, 401, 404, 429, 500),
          },
        },
      },
      '/v1/jobs/{id}/cancel': {
        post: {
          operationId: 'cancel_job',
          summary: 'Cancel a queued job',
          tags: ['jobs'],
          parameters: [jobId],
          responses: {
            200: { description: 'Cancelled.', headers: authed, content: json(ref('Job')) },
            ...pick(401, 404, 409, 429, 500),
          },
        },
      },
      '/v1/files': {
        post: {
          operationId: 'upload_file',
          summary:
            "Upload a file for this key's jobs: the body is the file, or (with size and no body) a direct upload to storage",
          tags: ['files'],
          parameters: [
            {
              name: 'name',
              in: 'query',
              schema: { type: 'string', minLength: 1, maxLength: 255, default: 'file' },
              description:
                'The file name: one path segment of at most 255 bytes (UTF-8), no slashes or control characters.',
            },
            {
              name: 'expiresInSeconds',
              in: 'query',
              schema: { type: 'integer', minimum: 60 },
              description: "How long it is kept (default 86400; at most the service's maximum, 7 days by default).",
            },
            {
              name: 'size',
              in: 'query',
              schema: { type: 'integer', minimum: 1 },
              description:
                'Announces a direct upload of this many bytes (send no body): the answer is a DirectUpload, presigned PUTs straight to storage.',
            },
          ],
          requestBody: {
            required: false,
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
            description: 'The file itself, at most 1 GiB, sent whole within the request time limit (30 s by default).',
          },
          responses: {
            201: {
              description: 'Stored (an Upload), or with size a direct upload announced (a DirectUpload).',
              headers: authed,
              content: { 'application/json': { schema: { oneOf: [ref('Upload'), ref('DirectUpload')] } } },
            },
            ...pick(400, 401, 429, 500),
          },
        },
        get: {
          operationId: 'list_files',
          summary: "List this key's unexpired uploads, newest first",
          tags: ['files'],
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 } },
            { name: 'cursor', in: 'query', schema: { type: 'string' }, description: "The previous page's nextCursor." },
          ],
          responses: {
            200: { description: 'A page of uploads.', headers: authed, content: json(ref('UploadList')) },
            ...pick(400, 401, 429, 500),
          },
        },
      },
      '/v1/files/{id}/complete': {
        post: {
          operationId: 'complete_file',
          summary: 'Complete a direct upload once its parts are sent: it becomes a file',
          tags: ['files'],
          parameters: [fileId],
          requestBody: {
            required: false,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    parts: {
                      type: 'array',
                      maxItems: 10000,
                      items: {
                        type: 'object',
                        properties: {
                          partNumber: { type: 'integer', minimum: 1 },
                          etag: { type: 'string', maxLength: 128 },
                        },
                        required: ['partNumber', 'etag'],
                      },
                    },
                  },
                  additionalProperties: false,
                },
              },
            },
            description: 'Each part with the ETag its PUT answered (required when there are several parts).',
          },
          responses: {
            200: { description: 'The file.', headers: authed, content: json(ref('Upload')) },
            ...pick(400, 401, 404, 429, 500),
          },
        },
      },
      '/v1/files/{id}': {
        get: {
          operationId: 'get_file',
          summary: 'Get an upload',
          tags: ['files'],
          parameters: [fileId],
          responses: {
            200: { description: 'The upload.', headers: authed, content: json(ref('Upload')) },
            ...pick(401, 404, 429, 500),
          },
        },
        delete: {
          operationId: 'delete_file',
          summary: 'Delete an upload now (jobs can no longer name it)',
          tags: ['files'],
          parameters: [fileId],
          responses: {
            204: { description: 'Deleted.', headers: authed },
            ...pick(401, 404, 429, 500),
          },
        },
      },
      '/v1/utilities': {
        get: {
          operationId: 'list_utilities',
          summary: 'Utilities this key may call',
          tags: ['catalog'],
          responses: {
            200: { description: 'The catalog.', headers: authed, content: json(ref('UtilityList')) },
            ...pick(401, 429, 500),
          },
        },
      },
      '/v1/utilities/{slug}': {
        get: {
          operationId: 'get_utility',
          summary: 'One catalog entry',
          tags: ['catalog'],
          parameters: [
            {
              name: 'slug',
              in: 'path',
              required: true,
              schema: { type: 'string' },
              examples: { split: { value: slugs[0] ?? 'split-pdf' } },
            },
          ],
          responses: {
            200: { description: 'The entry.', headers: authed, content: json(ref('CatalogEntry')) },
            ...pick(401, 404, 429, 500),
          },
        },
      },
      '/v1/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This document',
          security: [],
          responses: { 200: { description: 'OpenAPI 3.1 description.', content: json({ type: 'object' }) } },
        },
      },
    },
    // The callbacks an async job with a callbackUrl sends (Standard Webhooks), typed for generators.
    webhooks: Object.fromEntries(
      (['job.succeeded', 'job.failed'] as const).map((event) => [
        event,
        {
          post: {
            operationId: event.replace('.', '_'),
            summary:
              event === 'job.succeeded'
                ? 'A job with a callbackUrl succeeded'
                : 'A job with a callbackUrl failed (error code lost included)',
            security: [],
            parameters: WEBHOOK_HEADERS,
            requestBody: { required: true, content: json(ref('CallbackEvent')) },
            responses: {
              200: {
                description:
                  'Any 2xx within 10 s acknowledges it; anything else is retried (8 attempts from 10 s, doubling).',
              },
            },
          },
        },
      ]),
    ),
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key: du_live_ + 48 hex characters.' },
      },
      schemas: Object.fromEntries(
        RESPONSE_SCHEMAS.map((s) => [(s as unknown as { $id: string }).$id, componentRefs(s)]),
      ),
    },
  }
}
