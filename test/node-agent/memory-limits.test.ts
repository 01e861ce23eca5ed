import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { detectMemoryLimits, memoryBytes } from './memory-limits.js'
import { fileScratch } from '../support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratchRoot = fileScratch('dutil-test-memory-limits-')

describe('memoryBytes', () => {
  it('reads Kubernetes memory quantities', () => {
    expect(memoryBytes('512Mi')).toBe(512 * 1024 * 1024)
    expect(memoryBytes('2Gi')).toBe(2 * 1024 ** 3)
    expect(memoryBytes('1G')).toBe(1e9)
    expect(memoryBytes('128974848')).toBe(128974848)
    expect(memoryBytes('0.5Gi')).toBe(512 * 1024 * 1024)
    expect(memoryBytes('1e3')).toBe(1000)
  })
  it('refuses what is not one', () => {
    expect(memoryBytes(undefined)).toBeUndefined()
    expect(memoryBytes('lots')).toBeUndefined()
    expect(memoryBytes('12 Mi')).toBeUndefined()
  })
})

describe('detectMemoryLimits (against a fake cgroup tree)', () => {
  it('on cgroup v1, writes the limit and reads the oom_kill counter', () => {
    const sysfs = mkdtempSync(path.join(scratchRoot, 'cg1-'))
    mkdirSync(path.join(sysfs, 'memory'))
    writeFileSync(path.join(sysfs, 'memory', 'memory.limit_in_bytes'), '9223372036854771712')
    const limits = detectMemoryLimits('node-a', sysfs)!
    expect(limits.version).toBe(1)
    const cg = limits.create('pod-c', 64 * 1024 * 1024)
    const dir = path.join(sysfs, 'memory', 'dutil-node-agent', 'node-a', 'pod-c')
    expect(readFileSync(path.join(dir, 'memory.limit_in_bytes'), 'utf8')).toBe(String(64 * 1024 * 1024))
    cg.add(1234)
    expect(readFileSync(path.join(dir, 'cgroup.procs'), 'utf8')).toBe('1234')
    writeFileSync(path.join(dir, 'memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 0\n')
    expect(cg.oomKilled()).toBe(false)
    writeFileSync(path.join(dir, 'memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 1\n')
    expect(cg.oomKilled()).toBe(true)
  })

  it('on cgroup v2, only with the memory controller delegated; memory.max and memory.events', () => {
    const sysfs = mkdtempSync(path.join(scratchRoot, 'cg2-'))
    writeFileSync(path.join(sysfs, 'cgroup.controllers'), 'cpu memory pids')
    writeFileSync(path.join(sysfs, 'cgroup.subtree_control'), 'cpu pids')
    expect(detectMemoryLimits('node-a', sysfs)).toBeNull()
    writeFileSync(path.join(sysfs, 'cgroup.subtree_control'), 'cpu memory pids')
    const limits = detectMemoryLimits('node-a', sysfs)!
    expect(limits.version).toBe(2)
    const cg = limits.create('pod-c', 1000)
    const dir = path.join(sysfs, 'dutil-node-agent', 'node-a', 'pod-c')
    expect(readFileSync(path.join(dir, 'memory.max'), 'utf8')).toBe('1000')
    writeFileSync(path.join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n')
    expect(cg.oomKilled()).toBe(true)
  })

  it('is null without a memory controller', () => {
    expect(detectMemoryLimits('node-a', mkdtempSync(path.join(scratchRoot, 'cg0-')))).toBeNull()
  })
})
