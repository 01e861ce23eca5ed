import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { every, Program } from './program.js'

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms))

function program(opts: { drainMs?: number; checkTimeoutMs?: number } = {}) {
  const exits: number[] = []
  const p = new Program({ name: 'test', log: pino({ level: 'silent' }), exit: (c) => void exits.push(c), ...opts })
  return { p, exits }
}

describe('the program frame', () => {
  it('is ready only after its caches synced, and then only while every check passes (the first failure says why)', async () => {
    const { p } = program()
    let release!: () => void
    p.cache('jobs', { synced: new Promise<void>((r) => (release = r)), stop: () => {} })
    let storage: string | null = null
    p.check('storage', () => storage).check('database', async () => null)
    expect(await p.ready()).toBe('caches not synced')
    const synced = p.sync()
    release()
    await synced
    expect(await p.ready()).toBeNull()
    storage = 'storage unreachable'
    expect(await p.ready()).toBe('storage unreachable')
  })

  it('counts a check that hangs or throws as `<name> unreachable`', async () => {
    const { p } = program({ checkTimeoutMs: 20 })
    await p.sync()
    p.check('slow', () => new Promise<string | null>(() => {}))
    expect(await p.ready()).toBe('slow unreachable')
    const { p: q } = program()
    await q.sync()
    q.check('db', () => {
      throw new Error('connection refused')
    })
    expect(await q.ready()).toBe('db unreachable')
  })

  it('runs its checks side by side, each within the check timeout (an answer takes one check, not their sum)', async () => {
    const { p } = program({ checkTimeoutMs: 1000 })
    await p.sync()
    // `first` answers only once `second` has begun: one after the other, it would time out.
    let began!: () => void
    const secondBegan = new Promise<void>((r) => (began = r))
    p.check('first', () => secondBegan.then(() => null)).check('second', () => {
      began()
      return null
    })
    expect(await p.ready()).toBeNull()
  })

  it('runs leader-only work while leading and stops it when leadership ends: nothing runs after', async () => {
    const { p } = program()
    const ticks: number[] = []
    let stoppedCleanly = false
    p.leaderOnly({
      name: 'ticker',
      run: async (signal) => {
        await every(5, () => ticks.push(Date.now()), signal)
        stoppedCleanly = true
      },
    })
    expect(p.isLeading).toBe(false)
    p.lead()
    await tick(30)
    expect(ticks.length).toBeGreaterThan(1)
    await p.stopLeading()
    expect(stoppedCleanly).toBe(true)
    const seen = ticks.length
    await tick(30)
    expect(ticks.length).toBe(seen)
    expect(p.isLeading).toBe(false)
  })

  it('exits 1 when leader-only work fails, and at the fence before the write it guards', async () => {
    const { p, exits } = program()
    p.leaderOnly({
      name: 'broken',
      run: async () => {
        throw new Error('boom')
      },
    })
    p.lead()
    await tick()
    expect(exits).toEqual([1])

    const fenced = program()
    let mayAct = true
    const writes: string[] = []
    const fence = fenced.p.fence(() => mayAct)
    const write = (what: string) => {
      fence()
      writes.push(what)
    }
    write('status 1')
    mayAct = false
    expect(() => write('status 2')).toThrow('fenced')
    expect(writes).toEqual(['status 1'])
    expect(fenced.exits).toEqual([1])
  })

  it('shuts down in order: not ready at once, leader-only work drained, stop steps, caches; then exits 0', async () => {
    const { p, exits } = program()
    const order: string[] = []
    p.cache('jobs', { synced: Promise.resolve(), stop: () => void order.push('cache stopped') })
    await p.sync()
    p.leaderOnly({
      name: 'queue',
      run: (signal) =>
        new Promise<void>((resolve) =>
          signal.addEventListener('abort', () =>
            setTimeout(() => {
              order.push('in-flight item finished')
              resolve()
            }, 20),
          ),
        ),
    })
    p.onStop('lease', async () => void order.push('lease released'))
    p.onStop('database', () => {
      throw new Error('already closed')
    })
    p.lead()
    const done = p.shutdown('SIGTERM')
    expect(await p.ready()).toBe('shutting down')
    expect(p.signal.aborted).toBe(true)
    await done
    expect(order).toEqual(['in-flight item finished', 'lease released', 'cache stopped'])
    expect(exits).toEqual([0])
    // A second signal changes nothing.
    await p.shutdown('SIGINT')
    expect(exits).toEqual([0])
  })

  it('exits at the drain deadline when a step never ends', async () => {
    const { p, exits } = program({ drainMs: 30 })
    p.onStop('stuck', () => new Promise(() => {}))
    void p.shutdown('SIGTERM')
    await tick(60)
    expect(exits).toEqual([0])
  })
})
