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

/** Starts a component again exactly as the platform did; the platform's teardown stops it. */
export function startComponent(name: string): void {
  const spec = JSON.parse(readFileSync(pids(`${name}.json`), 'utf8')) as { command: string; args: string[]; env: Record<string, string> }
  const log = openSync(join(inject('platformDir'), 'logs', `${name}.log`), 'a')
  const child = spawn(spec.command, spec.args, { cwd: REPO_ROOT, env: { ...process.env, ...spec.env }, detached: true, stdio: ['ignore', log, log] })
  child.unref()
  writeFileSync(pids(`${name}.pid`), String(child.pid))
}

export const startOperator = () => startComponent('operator')
