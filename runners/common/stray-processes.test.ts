import { describe, expect, it } from 'vitest'
import { parseStat, strayProcesses } from './stray-processes.js'

describe('parseStat', () => {
  it('reads pid, parent and command, whatever the command holds', () => {
    expect(parseStat('42 (node) S 1 42 42 0 -1')).toEqual({ pid: 42, ppid: 1, command: 'node', state: 'S' })
    expect(parseStat('7 (a (b) c) R 42 7 7')).toEqual({ pid: 7, ppid: 42, command: 'a (b) c', state: 'R' })
    expect(parseStat('garbage')).toBeNull()
  })
})

describe('strayProcesses', () => {
  const p = (pid: number, ppid: number, command = 'x') => ({ pid, ppid, command })
  it('allows the runner and what it keeps, with their children; anything else is a stray', () => {
    const all = [p(1, 0, 'node'), p(10, 1, 'chromium'), p(11, 10, 'zygote'), p(12, 11, 'renderer')]
    expect(strayProcesses(all, 1, [10])).toEqual([])
    // A renderer that outlived its browser is re-parented to the runner: a stray.
    const orphan = p(13, 1, 'renderer')
    expect(strayProcesses([...all, orphan], 1, [10])).toEqual([orphan])
    // Nothing kept (a utility without a browser): every other process is a stray.
    expect(strayProcesses(all, 1, [])).toHaveLength(3)
    // A kept process that has ended keeps nothing alive.
    expect(strayProcesses([p(1, 0), p(20, 1)], 1, [10])).toEqual([p(20, 1)])
    // An orphan that has ended (a zombie the runner, as the first process, never reaps) runs nothing.
    expect(strayProcesses([...all, { ...p(30, 1, 'gpgconf'), state: 'Z' }], 1, [10])).toEqual([])
  })
})
