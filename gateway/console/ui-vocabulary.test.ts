import { describe, expect, it } from 'vitest'
import { JOB_STATES as CONTRACT_STATES } from '../../contract/crd-schemas.js'
import { CONTRACT_SLUGS } from '../../contract/utility.js'
import { JOB_STATES, UTILITY_SLUGS } from './ui/vocabulary.js'

describe("the console's filter words", () => {
  it("are the contract's utilities and job states, in its order", () => {
    expect(UTILITY_SLUGS).toEqual(CONTRACT_SLUGS)
    expect(JOB_STATES).toEqual(CONTRACT_STATES)
  })
})
