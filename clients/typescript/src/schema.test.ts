import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import { describe, expect, it } from 'vitest'

const here = dirname(fileURLToPath(import.meta.url))

describe('the generated API types', () => {
  it('match docs/openapi.yaml (regenerate with npm run generate)', async () => {
    const source = new URL(`file://${join(here, '..', '..', '..', 'docs', 'openapi.yaml')}`)
    const generated = astToString(await openapiTS(source))
    const committed = readFileSync(join(here, 'schema.ts'), 'utf8')
    // The file carries openapi-typescript's banner above the generated code.
    expect(committed.endsWith(generated)).toBe(true)
  })
})
