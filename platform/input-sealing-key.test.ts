import { describe, expect, it } from 'vitest'
import { InputSealingKey, SEALED_INPUTS_ENTRY } from './input-sealing-key.js'

/** The Secret's entries in memory, counting reads. */
function entries(initial: Record<string, string> = {}, failing = false) {
  const data = { ...initial }
  const counts = { reads: 0 }
  return {
    counts,
    data,
    get: async (entry: string) => {
      counts.reads++
      if (failing) throw new Error('the API server is away')
      return data[entry] ?? null
    },
    setIfAbsent: async (entry: string, value: string) => (data[entry] ??= value),
    write: async (set: Record<string, string | null>) => {
      for (const [k, v] of Object.entries(set))
        if (v === null) delete data[k]
        else data[k] = v
    },
  }
}

describe('whether the operator runs jobs whose input rides with them', () => {
  it('is no until its leader says so, asked again each time, then yes for good', async () => {
    const store = entries()
    const gateway = new InputSealingKey(store, 'make')
    expect(await gateway.operatorTakesSealedInputs()).toBe(false)
    expect(await gateway.operatorTakesSealedInputs()).toBe(false)
    await new InputSealingKey(store, 'read').announceSealedInputs()
    expect(store.data[SEALED_INPUTS_ENTRY]).toBe('v1')
    expect(await gateway.operatorTakesSealedInputs()).toBe(true)
    const reads = store.counts.reads
    expect(await gateway.operatorTakesSealedInputs()).toBe(true)
    expect(store.counts.reads).toBe(reads)
  })

  it('is no when the Secret cannot be read: the input is stored, which every operator reads', async () => {
    expect(await new InputSealingKey(entries({}, true), 'make').operatorTakesSealedInputs()).toBe(false)
  })
})
