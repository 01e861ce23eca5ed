import Type from 'typebox'
import type { InputProblem } from '../../contract/utility.js'

/** The most a PDF password holds (PDF 2.0's AES-256 passwords: 127 bytes of UTF-8). */
export const MAX_PASSWORD_BYTES = 127

/**
 * A password field of an input: `writeOnly`, so it is sealed where the input is stored and
 * opened only by the job's runner (docs/adr/0042), and never given back. No control characters
 * (a line break would end it where the tools read it from a file).
 */
export function passwordSchema(description: string, minLength = 1) {
  return Type.String({
    minLength,
    maxLength: MAX_PASSWORD_BYTES,
    pattern: '^[^\\u0000-\\u001f\\u007f]*$',
    writeOnly: true,
    description,
  })
}

/** A password longer than MAX_PASSWORD_BYTES in UTF-8 (its characters passed the schema's bound). */
export function passwordProblems(value: unknown, path: string): InputProblem[] {
  if (typeof value !== 'string' || Buffer.byteLength(value, 'utf8') <= MAX_PASSWORD_BYTES) return []
  return [{ path, message: `is longer than ${MAX_PASSWORD_BYTES} bytes in UTF-8, the most a PDF password holds` }]
}
