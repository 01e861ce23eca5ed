/** Header limits of the v1 contract, shared by the gateway and the OpenAPI document. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200
export const MAX_REQUEST_ID_LENGTH = 64
