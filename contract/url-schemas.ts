import Type from 'typebox'

export const MAX_INPUT_URL_LENGTH = 4096

/** An input URL that may also point into dutil's storage (`s3://bucket/key`). */
export const StorageOrHttpUrl = Type.String({
  maxLength: MAX_INPUT_URL_LENGTH,
  pattern: '^(https?|s3)://[^\\s]+$',
  description: 'http://, https:// or s3:// URL, at most 4096 characters.',
})

/** An input URL fetched from the public web only. */
export const HttpUrl = Type.String({
  maxLength: MAX_INPUT_URL_LENGTH,
  pattern: '^https?://[^\\s]+$',
  description: 'http:// or https:// URL, at most 4096 characters.',
})

/** A file in dutil's own storage only: an upload or an output of an earlier job (`s3://bucket/key`). */
export const StorageUrl = Type.String({
  maxLength: MAX_INPUT_URL_LENGTH,
  pattern: '^s3://[^\\s]+$',
  description: 's3:// URL of an upload or of an output of an earlier job, at most 4096 characters.',
})
