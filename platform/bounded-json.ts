/**
 * JSON read from outside (request bodies, runner-written objects) is bounded before it is
 * parsed: a size limit by the reader, and a nesting limit here, checked by one linear scan so that
 * nothing recursive (schema validation, JSON.stringify, a deep copy) ever meets a document nested
 * 100,000 levels deep.
 */

/** Deepest nesting dutil accepts anywhere: its own documents go a handful of levels deep. */
export const MAX_JSON_DEPTH = 32

/** Whether JSON text nests arrays and objects deeper than `maxDepth` (strings are skipped). */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: the next character is escaped
      else if (c === 0x22) inString = false
      continue
    }
    if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

export class JsonBoundError extends Error {
  constructor(
    message: string,
    readonly bound: 'size' | 'depth' | 'syntax',
  ) {
    super(message)
    this.name = 'JsonBoundError'
  }
}

/** Parses JSON text within a nesting bound; a deeper document or malformed text throws JsonBoundError. */
export function parseBoundedJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (nestsDeeperThan(text, maxDepth)) throw new JsonBoundError(`nested deeper than ${maxDepth} levels`, 'depth')
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new JsonBoundError(`not valid JSON: ${(err as Error).message}`, 'syntax')
  }
}
