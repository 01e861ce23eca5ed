import Type, { type Static, type TSchema } from 'typebox'

/**
 * A nullable value in the form Kubernetes structural schemas accept (`nullable: true`)
 * while the static type stays `T | null`.
 */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true })
}

/** An object whose fields Kubernetes must keep as given (caller metadata, result extras). */
export function FreeObject(options: Record<string, unknown> = {}) {
  return Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
    ...options,
  })
}
