/** Header limits of the v1 contract, shared by the gateway and the OpenAPI document. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200
export const MAX_REQUEST_ID_LENGTH = 64

/**
 * The largest file one upload may be (POST /v1/files): the largest input any utility reads
 * (unzip-files' archive, 1 GB). Each utility still applies its own, smaller limit when it runs.
 */
export const MAX_UPLOAD_BYTES = 1024 ** 3
