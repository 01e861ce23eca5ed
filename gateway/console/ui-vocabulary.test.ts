import { describe, expect, it } from 'vitest'
import { JOB_STATES as CONTRACT_STATES, TERMINAL_STATES as CONTRACT_TERMINAL } from '../../contract/crd-schemas.js'
import { CONTRACT_SLUGS } from '../../contract/utility.js'
import { isTerminal, JOB_STATES, TERMINAL_STATES, UTILITY_SLUGS } from './ui/vocabulary.js'

describe("the console's filter words", () => {
  it("are the contract's utilities and job states, in its order", () => {
    expect(UTILITY_SLUGS).toEqual(CONTRACT_SLUGS)
    expect(JOB_STATES).toEqual(CONTRACT_STATES)
    expect(TERMINAL_STATES).toEqual(CONTRACT_TERMINAL)
    expect(JOB_STATES.filter(isTerminal)).toEqual(CONTRACT_TERMINAL)
  })
})
