import { spawn } from 'node:child_process'
import { openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { inject } from 'vitest'
import { REPO_ROOT } from '../../platform/platform.js'

const pids = (file: string) => join(inject('platformDir'), 'pids', file)

/** Kills a platform component's whole process group at once, as a crash would. */
export function killComponent(name: string): void {
  const pid = Number(readFileSync(pids(`${name}.pid`), 'utf8'))
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}

/**
 * Starts a component again exactly as the platform did (`overrides` changes some of its
 * environment); the platform's teardown stops it.
 */
export function startComponent(name: string, overrides: Record<string, string> = {}): void {
  const spec = JSON.parse(readFileSync(pids(`${name}.json`), 'utf8')) as { command: string; args: string[]; env: Record<string, string> }
  const log = openSync(join(inject('platformDir'), 'logs', `${name}.log`), 'a')
  const child = spawn(spec.command, spec.args, { cwd: REPO_ROOT, env: { ...process.env, ...spec.env, ...overrides }, detached: true, stdio: ['ignore', log, log] })
  child.unref()
  writeFileSync(pids(`${name}.pid`), String(child.pid))
}

export const startOperator = (overrides: Record<string, string> = {}) => startComponent('operator', overrides)

/** Resolves once the (re)started operator answers /readyz (its caches are synced). */
export async function waitForOperatorReady(timeoutMs = 60_000): Promise<void> {
  const url = `http://127.0.0.1:${inject('programEnv').DUTIL_OPERATOR_PORT}/readyz`
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
