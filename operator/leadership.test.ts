import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { Program } from '../platform/program.js'
import { leadWhenElected } from './leadership.js'

function leaderProgram() {
  const p = new Program({ name: 'test', log: pino({ level: 'silent' }), exit: () => {} })
  const steps: string[] = []
  p.leaderOnly({ name: 'work', run: () => void steps.push('leading') })
  return { p, steps }
}

describe('leading when elected', () => {
  it('without election prepares the stores and leads at once', async () => {
    const { p, steps } = leaderProgram()
    await leadWhenElected(
      p,
      undefined,
      async () => void steps.push('prepared'),
      () => steps.push('lost'),
    )
    expect(steps).toEqual(['prepared', 'leading'])
  })

  it('renews from the moment the lease is won, before the stores are ready, then leads', async () => {
    const { p, steps } = leaderProgram()
    const elector = {
      acquire: async () => (steps.push('acquired'), true),
      holdUntilLost: () => (steps.push('renewing'), new Promise<'lost' | 'stopped'>(() => {})),
    }
    await leadWhenElected(
      p,
      elector,
      async () => void steps.push('prepared'),
      () => steps.push('lost'),
    )
    expect(steps).toEqual(['acquired', 'renewing', 'prepared', 'leading'])
  })

  it('neither prepares nor leads when the program stops before the lease is won', async () => {
    const { p, steps } = leaderProgram()
    const elector = { acquire: async () => false, holdUntilLost: async () => 'stopped' as const }
    await leadWhenElected(
      p,
      elector,
      async () => void steps.push('prepared'),
      () => steps.push('lost'),
    )
    expect(steps).toEqual([])
  })

  it('calls onLost when the lease is lost while leading, not when renewal stops at shutdown', async () => {
    for (const outcome of ['lost', 'stopped'] as const) {
      const { p, steps } = leaderProgram()
      const elector = { acquire: async () => true, holdUntilLost: async () => outcome }
      await leadWhenElected(
        p,
        elector,
        async () => {},
        () => steps.push('lost'),
      )
      await new Promise((r) => setTimeout(r, 0))
      expect(steps.includes('lost')).toBe(outcome === 'lost')
    }
  })
})
