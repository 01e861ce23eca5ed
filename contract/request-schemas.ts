import Type, { type TSchema } from 'typebox'
import type { UtilityDefinition } from './utility.js'

export const METADATA_LIMITS = { maxKeys: 50, maxKeyLength: 64, maxBytes: 4096 } as const
export const MAX_CALLBACK_URL_LENGTH = 2048

export const MetadataSchema = Type.Object(
  {},
  {
    additionalProperties: true,
    maxProperties: METADATA_LIMITS.maxKeys,
    propertyNames: { maxLength: METADATA_LIMITS.maxKeyLength },
    description:
      'Stored on the job and returned verbatim; at most 50 top-level keys, key names at most 64 characters, at most 4 KB serialised.',
  },
)

export const CallbackUrlSchema = Type.String({
  maxLength: MAX_CALLBACK_URL_LENGTH,
  pattern: '^https://[^\\s]+$',
  description: 'https:// URL that receives the signed job.succeeded / job.failed callback; at most 2048 characters.',
})

/** The body of both run routes for one utility; `callbackUrl` only exists on the async form. */
export function runRequestSchema(utility: UtilityDefinition, mode: 'sync' | 'async'): TSchema {
  const fields: Record<string, TSchema> = {
    input: utility.inputSchema,
    metadata: Type.Optional(MetadataSchema),
  }
  if (mode === 'async') fields.callbackUrl = Type.Optional(CallbackUrlSchema)
  return Type.Object(fields, { additionalProperties: false })
}
