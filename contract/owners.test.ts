import { describe, expect, it } from 'vitest'
import { keyOwner, namedOwner, ownerOfJob } from './owners.js'

describe('owners', () => {
  it("a console person's keys and playground runs are one owner, by e-mail in any case", () => {
    const key = keyOwner({ keyId: 'key_1', createdBy: { userId: 'u1', email: 'Ana@Example.com' } })
    expect(key).toBe('owner:ana@example.com')
    expect(ownerOfJob({ apiKeyId: '', userEmail: 'ana@example.com' })).toBe(key)
    expect(namedOwner(' ANA@example.com ')).toBe(key)
  })

  it('a key made with the CLI is its own owner unless it names one', () => {
    expect(keyOwner({ keyId: 'key_2' })).toBe('key:key_2')
    expect(keyOwner({ keyId: 'key_3', owner: 'billing-app' })).toBe('owner:billing-app')
    expect(keyOwner({ keyId: 'key_4', owner: 'ana@example.com', createdBy: { userId: 'u', email: 'b@x.io' } })).toBe(
      'owner:ana@example.com',
    )
  })

  it("a job's recorded owner wins; jobs from before owners count as their key's or their person's", () => {
    expect(ownerOfJob({ apiKeyId: 'key_1', owner: 'owner:team' })).toBe('owner:team')
    expect(ownerOfJob({ apiKeyId: 'key_1' })).toBe('key:key_1')
    expect(ownerOfJob({ apiKeyId: '', userEmail: 'B@x.io' })).toBe('owner:b@x.io')
  })
})
