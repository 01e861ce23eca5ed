import { describe, expect, it } from 'vitest'
import { drift } from './generate-documents.js'

describe('generated files', () => {
  it('match the TypeBox schemas (run `npm run generate` after changing a schema)', () => {
    expect(drift()).toEqual([])
  })
})
