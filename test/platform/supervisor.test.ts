import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { until } from './wait-for.js'
import { nextRestartDelay, Supervisor, type RestartPolicy } from './supervisor.js'

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('nextRestartDelay', () => {
  const policy: RestartPolicy = { initialDelayMs: 1000, maxDelayMs: 8000, resetAfterMs: 60_000 }
  it('doubles after each quick crash up to the cap, and starts over after a long run', () => {
    const delays: number[] = []
    let d = 0
    for (let i = 0; i < 6; i++) delays.push((d = nextRestartDelay(policy, d, 100)))
    expect(delays).toEqual([1000, 2000, 4000, 8000, 8000, 8000])
    expect(nextRestartDelay(policy, 8000, 61_000)).toBe(1000)
  })
})

describe('Supervisor with a restart policy (make dev)', () => {
  let dir: string
  let supervisor: Supervisor
  const exits: Array<{ name: string; code: number | null; restartInMs?: number }> = []
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dutil-supervisor-'))
    exits.length = 0
    supervisor = new Supervisor({
      restart: { initialDelayMs: 200, maxDelayMs: 1600, resetAfterMs: 60_000 },
      onUnexpectedExit: (name, code, restartInMs) => exits.push({ name, code, restartInMs }),
    })
  })
  afterEach(async () => {
    await supervisor.stopAll(2000)
    rmSync(dir, { recursive: true, force: true })
  })

  it('starts a killed process again within seconds, with a new pid, and says so', async () => {
    const pids: number[] = []
    const first = supervisor.start({
      name: 'operator',
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
      logFile: join(dir, 'operator.log'),
      onStart: (c) => pids.push(c.pid!),
    })
    expect(alive(first.pid!)).toBe(true)
    process.kill(first.pid!, 'SIGKILL')
    await until('restarted', async () => pids.length === 2 && alive(pids[1]), 5000, 50)
    expect(pids[1]).not.toBe(pids[0])
    expect(supervisor.current('operator')!.pid).toBe(pids[1])
    expect(exits).toEqual([{ name: 'operator', code: 137, restartInMs: 200 }])
  })

  it('backs off a process that keeps crashing, and stopAll cancels the pending restart', async () => {
    const pids: number[] = []
    supervisor.start({
      name: 'crasher',
      command: process.execPath,
      args: ['-e', 'console.log("up"); process.exit(3)'],
      logFile: join(dir, 'crasher.log'),
      onStart: (c) => pids.push(c.pid!),
    })
    await until('three crashes', async () => exits.length >= 3, 10_000, 50)
    expect(exits.slice(0, 3)).toEqual([
      { name: 'crasher', code: 3, restartInMs: 200 },
      { name: 'crasher', code: 3, restartInMs: 400 },
      { name: 'crasher', code: 3, restartInMs: 800 },
    ])
    await supervisor.stopAll(1000)
    const started = pids.length
    await new Promise((r) => setTimeout(r, 1800))
    expect(pids.length).toBe(started)
    expect(readFileSync(join(dir, 'crasher.log'), 'utf8').match(/up/g)!.length).toBe(started)
  })

  it('does not restart a process stopped on purpose', async () => {
    const pids: number[] = []
    supervisor.start({
      name: 'gateway',
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
      logFile: join(dir, 'gateway.log'),
      onStart: (c) => pids.push(c.pid!),
    })
    await supervisor.stopOne('gateway', 1000)
    await new Promise((r) => setTimeout(r, 500))
    expect(pids).toHaveLength(1)
    expect(alive(pids[0])).toBe(false)
    expect(exits).toEqual([])
  })
})

describe('Supervisor without a restart policy (tests)', () => {
  it('reports an exit and leaves the process down', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dutil-supervisor-'))
    const exits: Array<[string, number | null, number | undefined]> = []
    const s = new Supervisor((name, code, restartInMs) => exits.push([name, code, restartInMs]))
    try {
      const pids: number[] = []
      s.start({
        name: 'once',
        command: process.execPath,
        args: ['-e', 'process.exit(5)'],
        logFile: join(dir, 'once.log'),
        onStart: (c) => pids.push(c.pid!),
      })
      await until('exit reported', async () => exits.length === 1, 5000, 50)
      await new Promise((r) => setTimeout(r, 300))
      expect(exits).toEqual([['once', 5, undefined]])
      expect(pids).toHaveLength(1)
    } finally {
      await s.stopAll(1000)
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('keeps logging what a process left behind writes after it exits (in a session of its own, as PostgreSQL backends are)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dutil-supervisor-'))
    const exits: string[] = []
    const s = new Supervisor((name) => exits.push(name))
    try {
      // The process exits; what it started (in a session of its own by then) keeps its stdout and writes later.
      s.start({
        name: 'leaver',
        command: 'sh',
        args: ['-c', 'echo first; setsid sh -c "sleep 0.5; echo late" & sleep 0.2; exit 0'],
        logFile: join(dir, 'leaver.log'),
      })
      await until('exit reported', async () => exits.length === 1, 5000, 20)
      await until(
        'the late line logged',
        async () => readFileSync(join(dir, 'leaver.log'), 'utf8').includes('late'),
        5000,
        50,
      )
      expect(readFileSync(join(dir, 'leaver.log'), 'utf8')).toBe('first\nlate\n')
    } finally {
      await s.stopAll(1000)
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('lets a process write its whole log while the test run is busy in a synchronous call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dutil-supervisor-'))
    const s = new Supervisor(() => {})
    try {
      const marker = join(dir, 'written')
      // 1 MiB of output, far past a pipe's buffer, then a mark that all of it was written.
      s.start({
        name: 'chatty',
        command: process.execPath,
        args: [
          '-e',
          `process.stdout.write('x'.repeat(1 << 20), () => require('fs').writeFileSync(${JSON.stringify(marker)}, ''))`,
        ],
        logFile: join(dir, 'chatty.log'),
      })
      // This process's event loop is blocked while the shell waits (up to 10 s) for the mark.
      const waited = spawnSync('sh', [
        '-c',
        `for i in $(seq 100); do [ -e '${marker}' ] && exit 0; sleep 0.1; done; exit 1`,
      ])
      expect(waited.status, 'the process was held up by its output while the test run was busy').toBe(0)
      await until(
        'the log complete',
        async () => readFileSync(join(dir, 'chatty.log'), 'utf8').length === 1 << 20,
        5000,
        20,
      )
    } finally {
      await s.stopAll(1000)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 20_000)
})
