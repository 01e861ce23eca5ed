import { describe, expect, it } from 'vitest'
import { codeOfJobId, createdAtOfId, jobIdPattern, idMaker, ulidOf } from './ids.js'
import { keyTenant, playgroundTenant, tenantCode, tenantOf, uploadTenant } from './tenants.js'

describe('tenants', () => {
  it("a job's tenant is its key, else its person's playground; an upload's, its key's", () => {
    expect(tenantOf({ apiKeyId: 'key_1' })).toBe('key:key_1')
    expect(keyTenant('key_1')).toBe('key:key_1')
    expect(tenantOf({ apiKeyId: '', source: 'playground', userEmail: 'a@example.com' })).toBe(
      'playground:a@example.com',
    )
    expect(playgroundTenant('a@example.com')).toBe('playground:a@example.com')
    expect(uploadTenant('key_1')).toBe(tenantOf({ apiKeyId: 'key_1' }))
  })

  it('codes are 8 characters of the ULID alphabet, one per tenant, the same each time', () => {
    const codes = Array.from({ length: 2000 }, (_, i) => tenantCode(keyTenant(`key_${i}`)))
    for (const c of codes) expect(c).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/)
    expect(new Set(codes).size).toBe(codes.length)
    expect(tenantCode(keyTenant('key_7'))).toBe(codes[7])
  })

  it("a job id carries its tenant's code after its time, stays a ULID of its time, and increases within a millisecond", () => {
    const newId = idMaker()
    const code = tenantCode(keyTenant('key_1'))
    const at = Date.parse('2026-11-30T10:00:00.250Z')
    const ids = Array.from({ length: 50 }, () => newId('job', at, code))
    for (const id of ids) {
      expect(ulidOf(id, 'job')).not.toBeNull()
      expect(createdAtOfId(id, 'job')).toBe('2026-11-30T10:00:00.250Z')
      expect(codeOfJobId(id)).toBe(code)
      expect(id).toMatch(new RegExp(`^${jobIdPattern(code).replace(/\?/g, '.')}$`))
    }
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
    expect(codeOfJobId('job_x')).toBeNull()
  })
})
