import { createHash } from 'node:crypto'
import { invalid } from './api-error.js'

import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../contract/limits.js'

/** The Idempotency-Key header: absent, or 1 to 200 characters (an empty one is refused, not ignored). */
export function readIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (Array.isArray(header) || header === '' || header.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw invalid('Idempotency-Key must be 1 to 200 characters.', [
      { path: 'Idempotency-Key', message: 'must be 1 to 200 characters' },
    ])
  }
  return header
}

/**
 * Scope hash of an Idempotency-Key: per API key, 40 hex characters. The job record's unique key
 * on (API key, hash) makes one key one job (platform/db/jobs-table.ts insertAccepted).
 */
export function idempotencyHash(apiKeyId: string, idempotencyKey: string): string {
  return createHash('sha256').update(`${apiKeyId}\n${idempotencyKey}`).digest('hex').slice(0, 40)
}
