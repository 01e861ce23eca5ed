import { Validator } from '@seriousme/openapi-schema-validator'
import { describe, expect, it } from 'vitest'
import { catalog, UTILITIES } from '../runners/catalog.js'
import { openApiDocument } from './openapi.js'

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 description', async () => {
    const validator = new Validator()
    const res = await validator.validate(openApiDocument(UTILITIES) as never)
    expect(res.errors ?? []).toEqual([])
    expect(res.valid).toBe(true)
    expect(validator.version).toBe('3.1')
  })

  it('describes each enabled utility with the same schema the gateway validates with', () => {
    const doc = openApiDocument(UTILITIES) as { paths: Record<string, any> }
    for (const u of [...catalog.values()].filter((x) => x.enabled)) {
      const body = doc.paths[`/v1/utilities/${u.slug}`].post.requestBody.content['application/json'].schema
      expect(body.properties.input).toEqual(u.inputSchema)
      expect(body.properties.callbackUrl).toBeUndefined()
      expect(
        doc.paths[`/v1/utilities/${u.slug}/jobs`].post.requestBody.content['application/json'].schema.properties
          .callbackUrl,
      ).toBeDefined()
    }
  })
})
