import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const dir = mkdtempSync(join(tmpdir(), 'child-groups-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Whether a pid names a live process (a zombie is gone for this purpose). */
function alive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`
  if (!existsSync(stat)) return false
  try {
    return readFileSync(stat, 'utf8').split(') ')[1]?.[0] !== 'Z'
  } catch {
    return false
  }
}

/**
 * A runner-like program that starts a shell in a group of its own (with a background process
 * in it, as LibreOffice's converter starts soffice), registered or not, and optionally a SIGTERM
 * handler of its own; it prints the two pids and then idles until signalled.
 */
async function runner(opts: { register: boolean; ownHandler: boolean }) {
  const file = join(dir, `runner-${Math.random().toString(36).slice(2)}.ts`)
  writeFileSync(
    file,
    `import { spawn } from 'node:child_process'
import { killWithRunner } from ${JSON.stringify(join(import.meta.dirname, 'child-groups.ts'))}
const child = spawn('sh', ['-c', 'sleep 300 & echo $!; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] })
${opts.register ? 'killWithRunner(child)' : ''}
${opts.ownHandler ? "process.on('SIGTERM', () => setTimeout(() => process.exit(0), 100))" : ''}
child.stdout.once('data', (d) => console.log(JSON.stringify([child.pid, Number(String(d).trim())])))
setInterval(() => {}, 1000)
`,
  )
  const proc = spawn(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
  const pids = await new Promise<number[]>((resolve) =>
    proc.stdout!.once('data', (d: Buffer) => resolve(JSON.parse(String(d)) as number[])),
  )
  return { proc, pids, exited }
}

const gone = async (pids: number[]) => {
  for (let i = 0; i < 50 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 100))
  return pids.filter(alive)
}

describe('killWithRunner', () => {
  it('takes a registered group along when the runner is stopped by SIGTERM (exit 143)', async () => {
    const { proc, pids, exited } = await runner({ register: true, ownHandler: false })
    expect(pids.every(alive)).toBe(true)
    proc.kill('SIGTERM')
    expect(await exited).toBe(143)
    expect(await gone(pids)).toEqual([])
  })

  it('leaves the stop to a SIGTERM handler of the program, and kills the group at its exit', async () => {
    const { proc, pids, exited } = await runner({ register: true, ownHandler: true })
    proc.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(await gone(pids)).toEqual([])
  })

  it('an unregistered group outlives a runner stopped by SIGTERM (what registering prevents)', async () => {
    const { proc, pids, exited } = await runner({ register: false, ownHandler: false })
    proc.kill('SIGTERM')
    await exited
    try {
      expect(pids.filter(alive)).toEqual(pids)
    } finally {
      for (const pid of pids) process.kill(pid, 'SIGKILL')
    }
  })
})
