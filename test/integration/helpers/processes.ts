import { spawn } from 'node:child_process'
import { openSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { inject } from 'vitest'
import { livePid, processStartTime, signalComponentGroup, writePidFile } from '../../platform/pid-files.js'
import { REPO_ROOT } from '../../platform/platform.js'

const pids = (file: string) => join(inject('platformDir'), 'pids', file)

/** Kills a platform component's whole process group at once, as a crash would (nothing when it is not running). */
export function killComponent(name: string): void {
  signalComponentGroup(inject('platformDir'), name, 'SIGKILL')
}

/** A process by its pid now: the pid, and whether that very process still runs. */
function processNow(pid: number): { pid: number; running: () => boolean } {
  const started = processStartTime(pid)
  return { pid, running: () => processStartTime(pid) === started }
}

/** A running component's process: its pid, and whether that very process still runs. */
export function componentProcess(name: string): { pid: number; running: () => boolean } {
  const pid = livePid(inject('platformDir'), name)
  if (pid === undefined) throw new Error(`${name} is not running`)
  return processNow(pid)
}

/** Whether a component's process (the one its pid file names) runs. */
export function componentRunning(name: string): boolean {
  return livePid(inject('platformDir'), name) !== undefined
}

/**
 * A restarted container gets a fresh PID namespace, so PostgreSQL never sees its crashed
 * predecessor's postmaster.pid as live. Here the predecessor's pid may be a zombie (its parent, a
 * finished test worker, never reaps it) or, this machine's pid space being small, another
 * process's by now: PostgreSQL would take either for a running server and refuse to start. When
 * the component is not running (its own pid file says so), the lock file is stale: it goes.
 */
function removeStalePostgresLock(as: string): void {
  if (componentRunning(as)) return
  rmSync(join(inject('platformDir'), 'postgres', 'postmaster.pid'), { force: true })
}

/**
 * Starts a component again exactly as the platform did (`overrides` changes some of its
 * environment); the platform's teardown stops it.
 */
export function startComponent(name: string, overrides: Record<string, string> = {}): void {
  startComponentAs(name, name, overrides)
}

/**
 * Starts a second instance of a component under another name (its own pid file and log, e.g. a
 * second operator replica); the platform's teardown stops it too.
 */
export function startComponentAs(as: string, from: string, overrides: Record<string, string> = {}): void {
  if (from === 'postgres') removeStalePostgresLock(as)
  const spec = JSON.parse(readFileSync(pids(`${from}.json`), 'utf8')) as {
    command: string
    args: string[]
    env: Record<string, string>
  }
  const log = openSync(join(inject('platformDir'), 'logs', `${as}.log`), 'a')
  const child = spawn(spec.command, spec.args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...spec.env, ...overrides },
    detached: true,
    stdio: ['ignore', log, log],
  })
  child.unref()
  if (child.pid) writePidFile(inject('platformDir'), as, child.pid)
}

export const startOperator = (overrides: Record<string, string> = {}) => startComponent('operator', overrides)

/** Resolves once the (re)started operator answers /readyz (its caches are synced). */
export async function waitForOperatorReady(
  timeoutMs = 60_000,
  port: string | number = inject('programEnv').DUTIL_OPERATOR_PORT,
): Promise<void> {
  const url = `http://127.0.0.1:${port}/readyz`
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`the operator was not ready within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** Sends SIGTERM to a component (as Kubernetes does on a rollout) and waits until it has exited. */
export async function terminateComponent(name: string, timeoutMs = 30_000): Promise<void> {
  const pid = livePid(inject('platformDir'), name)
  if (pid === undefined) return
  const proc = processNow(pid)
  try {
    process.kill(proc.pid, 'SIGTERM')
  } catch {
    return
  }
  const deadline = Date.now() + timeoutMs
  while (proc.running()) {
    if (Date.now() > deadline) throw new Error(`${name} did not exit within ${timeoutMs} ms of SIGTERM`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** A metric's value in a Prometheus text exposition, or undefined when the series is absent. */
export function metricValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

export async function scrape(port: number | string): Promise<string> {
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
}

/** Resolves once the operator on `port` reports that it holds the lease (`dutil_operator_leader 1`). */
export async function waitForLeader(
  port: string | number = inject('programEnv').DUTIL_OPERATOR_PORT,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      if (metricValue(await scrape(port), 'dutil_operator_leader') === 1) return
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`the operator on port ${port} did not lead within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Restarts the gateway with `overrides` in its environment (none: as the platform started it), ready. */
export async function restartGateway(overrides: Record<string, string> = {}): Promise<void> {
  await terminateComponent('gateway')
  startComponent('gateway', overrides)
  const url = `${inject('gatewayUrl')}/readyz`
  const deadline = Date.now() + 60_000
  while ((await fetch(url).catch(() => null))?.status !== 200) {
    if (Date.now() > deadline) throw new Error('the gateway was not ready within 60 s')
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Restarts the operator with `overrides` in its environment, ready and leading. */
export async function restartOperator(overrides: Record<string, string> = {}): Promise<void> {
  await terminateComponent('operator')
  startOperator(overrides)
  await waitForOperatorReady()
  await waitForLeader()
}
