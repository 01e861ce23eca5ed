import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { livePid, pidFile, processStartTime, signalComponentGroup, writePidFile } from './pid-files.js'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dutil-pids-'))
  mkdirSync(join(dir, 'pids'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const sleeper = () => {
  const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' })
  const exited = new Promise((r) => child.once('exit', r))
  return { child, exited }
}

describe('pid files', () => {
  it('name a running component, and no process once it has exited', async () => {
    const { child, exited } = sleeper()
    writePidFile(dir, 'redis', child.pid!)
    expect(livePid(dir, 'redis')).toBe(child.pid)
    child.kill('SIGKILL')
    await exited
    expect(livePid(dir, 'redis')).toBeUndefined()
  })

  it('do not name a process that has the same pid but started at another time (a reused pid)', () => {
    // This test process runs, with a start time other than the one recorded.
    const real = processStartTime(process.pid)!
    writeFileSync(pidFile(dir, 'operator'), `${process.pid} ${Number(real) + 1}`)
    expect(livePid(dir, 'operator')).toBeUndefined()
    // Signalling it through the stale file reaches nothing (this process would not survive a SIGKILL).
    expect(signalComponentGroup(dir, 'operator', 'SIGKILL')).toBe(false)
    writeFileSync(pidFile(dir, 'operator'), `${process.pid}`)
    expect(livePid(dir, 'operator')).toBeUndefined()
  })

  it('signal the whole group of a running component', async () => {
    const { child, exited } = sleeper()
    writePidFile(dir, 'minio', child.pid!)
    expect(signalComponentGroup(dir, 'minio', 'SIGKILL')).toBe(true)
    await exited
    expect(child.signalCode).toBe('SIGKILL')
    expect(signalComponentGroup(dir, 'minio', 'SIGKILL')).toBe(false)
  })

  it('name nothing without a pid file', () => {
    expect(livePid(dir, 'etcd')).toBeUndefined()
    expect(signalComponentGroup(dir, 'etcd', 'SIGKILL')).toBe(false)
  })
})
