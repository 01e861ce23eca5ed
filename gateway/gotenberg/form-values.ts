/**
 * Form values as Gotenberg's routes read them: booleans and numbers as Go parses them, lengths in
 * inches or with a unit, and an empty value standing for the field's default.
 */

/** A form refused: the field or file it names and why (answered as 400). */
export class FormRefused extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message)
    this.name = 'FormRefused'
  }
}

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True'])
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False'])

/** A boolean as Go's strconv.ParseBool reads it. */
export function parseBool(field: string, value: string): boolean {
  if (TRUE.has(value)) return true
  if (FALSE.has(value)) return false
  throw new FormRefused(field, `form field '${field}' is invalid (got '${clip(value)}'): expected true or false`)
}

/** A decimal number (no hexadecimal, no Infinity or NaN). */
export function parseNumber(field: string, value: string): number {
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(value.trim()))
    throw new FormRefused(field, `form field '${field}' is invalid (got '${clip(value)}'): expected a number`)
  return Number(value)
}

/** Inches per unit of the lengths Gotenberg reads (a bare number is in inches). */
const INCHES_PER: Record<string, number> = { pt: 1 / 72, px: 1 / 96, in: 1, mm: 1 / 25.4, cm: 1 / 2.54, pc: 1 / 6 }

/** A paper size or margin in inches: a number with a unit (pt, px, in, mm, cm, pc), or a bare number of inches. */
export function parseInches(field: string, value: string): number {
  const m = /^(.*?)(pt|px|in|mm|cm|pc)?$/.exec(value.trim())!
  const n = parseNumber(field, m[1])
  if (n < 0) throw new FormRefused(field, `form field '${field}' is invalid (got '${clip(value)}'): below zero`)
  return n * INCHES_PER[m[2] ?? 'in']
}

/** Inches as a CSS length html-pdf takes ("0.39in"), to a ten-thousandth of an inch. */
export function cssInches(inches: number): string {
  const rounded = Math.round(inches * 10_000) / 10_000
  return rounded === 0 ? '0' : `${rounded.toFixed(4).replace(/\.?0+$/, '')}in`
}

/** Milliseconds of a Go duration as Gotenberg takes one ("500ms", "2s", "1.5s", "1m"). */
export function parseDurationMs(field: string, value: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(value.trim())
  if (!m)
    throw new FormRefused(
      field,
      `form field '${field}' is invalid (got '${clip(value)}'): a duration such as 500ms or 2s`,
    )
  return Math.round(Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] as 'ms' | 's' | 'm'])
}

/** Whole numbers at most 2^53 (an int field). */
export function parseInteger(field: string, value: string): number {
  if (!/^[+-]?\d{1,15}$/.test(value.trim()))
    throw new FormRefused(field, `form field '${field}' is invalid (got '${clip(value)}'): expected a whole number`)
  return Number(value)
}

/**
 * Names in their natural order: runs of digits compare as numbers ("2.pdf" before "10.pdf",
 * "page_9" before "page_10"), the rest as text. Merged files go in this order, as Gotenberg's do.
 */
export function naturalCompare(a: string, b: string): number {
  const pa = a.match(/\d+|\D+/g) ?? []
  const pb = b.match(/\d+|\D+/g) ?? []
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i]
    const y = pb[i]
    if (x === y) continue
    const dx = /^\d/.test(x)
    const dy = /^\d/.test(y)
    if (dx && dy) {
      const d = BigInt(x) - BigInt(y)
      if (d !== 0n) return d < 0n ? -1 : 1
      continue // equal numbers, written differently ("01" and "1"): look further
    }
    // A name that starts with a number comes before one that does not.
    if (dx !== dy) return dx ? -1 : 1
    return x < y ? -1 : 1
  }
  if (pa.length !== pb.length) return pa.length - pb.length
  return a < b ? -1 : a > b ? 1 : 0
}

const clip = (value: string) => (value.length > 64 ? `${value.slice(0, 64)}…` : value)

/** A field's value refused, with why. */
export function invalidField(field: string, why: string): FormRefused {
  return new FormRefused(field, `form field '${field}' is invalid: ${why}`)
}

/** A field that holds JSON (Gotenberg's `metadata`, `bookmarks`), parsed; refused naming it when it is not JSON. */
export function parseJsonField(field: string, value: string): unknown {
  try {
    return JSON.parse(value)
  } catch {
    throw invalidField(field, 'not JSON')
  }
}
