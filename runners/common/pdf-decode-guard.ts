// The very module pdf-lib's decoders use (its CommonJS build, which `pdf-lib` resolves to): imported
// statically, so a bundle (runners/bundle-runners.ts) patches the copy pdf-lib runs, not another.
import * as decodeStreamModule from 'pdf-lib/cjs/core/streams/DecodeStream.js'

/**
 * pdf-lib decodes compressed streams (object streams at load) into buffers that grow without
 * bound, so a few kilobytes of nested FlateDecode can ask for gigabytes. Every decoder grows its
 * output through DecodeStream.ensureBuffer; this guard caps that growth per stream and in total.
 * Past a cap the decode throws, which pdf-lib's lenient parser may swallow, so the guard also
 * remembers that it tripped and the caller turns that into a classified failure.
 */
export const DECODE_LIMITS = {
  /** Largest decoded stream. */
  maxStreamBytes: 128 * 1024 ** 2,
  /** All decoded streams of one document together (buffer growth, so an upper bound). */
  maxTotalBytes: 512 * 1024 ** 2,
}

interface DecodeStreamLike {
  buffer: Uint8Array
  minBufferLength: number
}

export class DecodeLimitError extends Error {
  constructor(readonly limitBytes: number) {
    super(`decoded stream data passed ${limitBytes} bytes`)
    this.name = 'DecodeLimitError'
  }
}

export interface DecodeGuard {
  /** The cap that was passed, or null. */
  readonly tripped: number | null
  /** Decoded bytes counted so far. */
  readonly total: number
  reset(): void
  uninstall(): void
}

type DecodeStreamClass = { prototype: { ensureBuffer(this: DecodeStreamLike, requested: number): Uint8Array } }

/** The class, through whichever CommonJS interop the loader applied (`default` once or twice). */
function decodeStreamClass(): DecodeStreamClass {
  let m = decodeStreamModule as unknown as { default?: unknown; prototype?: { ensureBuffer?: unknown } }
  while (m && typeof m.prototype?.ensureBuffer !== 'function') m = m.default as typeof m
  if (!m) throw new Error('pdf-lib DecodeStream not found: the decode guard cannot be installed')
  return m as unknown as DecodeStreamClass
}

export function installDecodeGuard(limits = DECODE_LIMITS): DecodeGuard {
  const DecodeStream = decodeStreamClass()
  const original = DecodeStream.prototype.ensureBuffer
  let total = 0
  let tripped: number | null = null
  DecodeStream.prototype.ensureBuffer = function (this: DecodeStreamLike, requested: number) {
    if (requested > this.buffer.byteLength) {
      if (requested > limits.maxStreamBytes) {
        tripped ??= limits.maxStreamBytes
        throw new DecodeLimitError(limits.maxStreamBytes)
      }
      // The buffer doubles up to at least `requested`: count what it will grow by.
      let size = this.minBufferLength
      while (size < requested) size *= 2
      total += size - this.buffer.byteLength
      if (total > limits.maxTotalBytes) {
        tripped ??= limits.maxTotalBytes
        throw new DecodeLimitError(limits.maxTotalBytes)
      }
    }
    return original.call(this, requested)
  }
  return {
    get tripped() {
      return tripped
    },
    get total() {
      return total
    },
    reset() {
      total = 0
      tripped = null
    },
    uninstall() {
      DecodeStream.prototype.ensureBuffer = original
    },
  }
}
