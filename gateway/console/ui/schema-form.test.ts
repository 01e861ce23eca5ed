import { describe, expect, it } from 'vitest'
import { choicesOf, humanize } from './schema-form.js'

describe('playground form labels and choices', () => {
  it('turns property names into labels', () => {
    expect(humanize('url')).toBe('URL')
    expect(humanize('pdfOptions')).toBe('PDF options')
    expect(humanize('preferCSSPageSize')).toBe('Prefer CSS page size')
    expect(humanize('fileName')).toBe('File name')
    expect(humanize('printBackground')).toBe('Print background')
  })

  it('reads enums and TypeBox unions of literals as choices', () => {
    expect(choicesOf({ enum: ['a', 'b'] })).toEqual(['a', 'b'])
    expect(choicesOf({ anyOf: [{ const: 'portrait' }, { const: 'landscape' }] })).toEqual(['portrait', 'landscape'])
    expect(choicesOf({ anyOf: [{ type: 'string' }, { const: 'x' }] })).toBeNull()
    expect(choicesOf({ type: 'string' })).toBeNull()
  })
})
