import { spawn } from 'node:child_process'
import { openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { inject } from 'vitest'
import { REPO_ROOT } from '../../platform/platform.js'

function pidFile(name: string): string {
  return join(inject('platformDir'), 'pids', `${name}.pid`)
}

/** Kills a platform component's whole process group at once, as a crash would. */
export function killComponent(name: string): void {
  const pid = Number(readFileSync(pidFile(name), 'utf8'))
  process.kill(-pid, 'SIGKILL')
}

/**
 * Starts the operator again with the platform's settings (`overrides` changes some of them);
 * the platform's teardown stops it.
 */
export function startOperator(overrides: Record<string, string> = {}): void {
  const log = openSync(join(inject('platformDir'), 'logs', 'operator.log'), 'a')
  const child = spawn(process.execPath, [join(REPO_ROOT, 'dist', 'operator', 'main.js')], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...inject('programEnv'), ...overrides },
    detached: true,
    stdio: ['ignore', log, log],
  })
  child.unref()
  writeFileSync(pidFile('operator'), String(child.pid))
}

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
