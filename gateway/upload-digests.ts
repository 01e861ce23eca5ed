import { createHash, type Hash } from 'node:crypto'
import { SNIFF_BYTES } from './upload-sniff.js'

/** A part of a direct upload that passed through the files host and that storage stored. */
interface PartDigest {
  /** Storage's ETag for the part (quotes dropped). */
  etag: string
  /** The ETag of the part before it, whose hash this one's continued (none for part 1). */
  after?: string
  /** SHA-256 of the upload's bytes up to the end of this part. */
  hash: Hash
  /** The upload's first bytes (what its type is sniffed from). */
  head: Buffer
  at: number
}

/** One PUT being hashed as it passes: feed it the body's chunks, then tell it what storage answered. */
export interface PartTap {
  update(chunk: Buffer): void
  /** Storage stored the part (2xx with this ETag); `bytes`, its declared length, must be what was hashed. */
  stored(etag: string, bytes: number): void
}

/** The SHA-256 and first bytes of an upload whose every part is known here, chained in order. */
export interface KnownDigest {
  sha256: string
  head: Buffer
}

const unquoted = (etag: string) => etag.replace(/^"|"$/g, '')

/**
 * SHA-256 of direct uploads, computed by the files host as their bytes pass on to storage, so that
 * completing one does not read the whole file back. Part N is hashed on from a copy of part N−1's
 * state when part N−1 passed through this process first (a client that sends parts one after
 * another); a completion whose named parts form such a chain (every part here, each with the ETag
 * storage answered for it, each continuing the part before it as it is now) has its digest. Parts
 * sent at once, through another gateway replica, or sent again out of order leave the chain
 * unknown, and the completion reads the file back as before. Memory is bounded: at most
 * `maxParts` parts (the oldest go first), none older than `ttlMs`.
 */
export class UploadDigests {
  private readonly parts = new Map<string, PartDigest>()
  /** Completions answered from here, and those that had to read the file back (the metrics read them). */
  readonly counts = { hashedInPassing: 0, readBack: 0 }

  constructor(
    private readonly maxParts = 4096,
    private readonly ttlMs = 3600_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Starts hashing a PUT of an upload's object (`partNumber` 1 and no `uploadId` for a single
   * PUT); undefined when part N−1 is unknown here (nothing to continue from).
   */
  begin(key: string, partNumber: number, uploadId = ''): PartTap | undefined {
    const before = partNumber > 1 ? this.parts.get(partId(key, uploadId, partNumber - 1)) : undefined
    if (partNumber > 1 && !before) return undefined
    const hash = before ? before.hash.copy() : createHash('sha256')
    const head: Buffer[] = []
    let headBytes = before ? SNIFF_BYTES : 0
    let hashed = 0
    return {
      update: (chunk) => {
        hash.update(chunk)
        hashed += chunk.length
        if (headBytes < SNIFF_BYTES) {
          const piece = Buffer.from(chunk.subarray(0, SNIFF_BYTES - headBytes))
          head.push(piece)
          headBytes += piece.length
        }
      },
      stored: (etag, bytes) => {
        if (bytes !== hashed) return
        this.put(partId(key, uploadId, partNumber), {
          etag: unquoted(etag),
          ...(before ? { after: before.etag } : {}),
          hash,
          head: before ? before.head : Buffer.concat(head),
          at: this.now(),
        })
      },
    }
  }

  /**
   * The digest of an upload stored from exactly these parts (their ETags in order; one for a
   * single PUT), when each passed here in a chain; undefined otherwise. Its parts are forgotten.
   */
  take(key: string, etags: string[], uploadId = ''): KnownDigest | undefined {
    const chain: PartDigest[] = []
    for (let n = 1; n <= etags.length; n++) {
      const p = this.parts.get(partId(key, uploadId, n))
      if (!p || p.etag !== unquoted(etags[n - 1]) || p.after !== (n > 1 ? unquoted(etags[n - 2]) : undefined)) break
      chain.push(p)
    }
    this.forget(key, uploadId, etags.length)
    if (etags.length === 0 || chain.length !== etags.length) {
      this.counts.readBack++
      return undefined
    }
    this.counts.hashedInPassing++
    return { sha256: chain[chain.length - 1].hash.copy().digest('hex'), head: chain[0].head }
  }

  /** Parts held now (for tests and metrics). */
  get size(): number {
    return this.parts.size
  }

  private forget(key: string, uploadId: string, count: number): void {
    for (let n = 1; n <= count; n++) this.parts.delete(partId(key, uploadId, n))
  }

  private put(id: string, p: PartDigest): void {
    this.parts.delete(id)
    this.parts.set(id, p)
    const oldest = this.now() - this.ttlMs
    for (const [k, v] of this.parts) {
      if (this.parts.size <= this.maxParts && v.at >= oldest) break
      this.parts.delete(k)
    }
  }
}

const partId = (key: string, uploadId: string, partNumber: number) => `${uploadId}\n${key}\n${partNumber}`
