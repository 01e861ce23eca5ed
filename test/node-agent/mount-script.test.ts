import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { UNSHARE_ARGS } from './container-process.js'
import { buildMountScript, shellQuote } from './mount-script.js'

describe('shellQuote', () => {
  it('survives a round trip through sh', () => {
    const nasty = `it's "quoted" $(rm -rf /) \`x\` \\ end`
    expect(execFileSync('/bin/sh', ['-c', `printf %s ${shellQuote(nasty)}`]).toString()).toBe(nasty)
  })
})

describe('buildMountScript', () => {
  it('mounts the image root first, parents before children, the termination log last', () => {
    const script = buildMountScript({
      imageRoot: '/repo',
      mounts: [
        { source: '/w/u/volumes/nested', target: '/etc/cfg/nested/', readOnly: true, file: false },
        { source: '/w/u/volumes/cfg', target: '/etc/cfg', readOnly: false, file: false },
        { source: '/w/u/volumes/cfg/one', target: '/etc/one.conf', readOnly: false, file: true },
      ],
      terminationLog: { source: '/w/u/main.termination-log', target: '/dev/termination-log' },
      workingDir: '/app/work dir',
    })
    expect(script.split('\n')).toEqual([
      'set -e',
      "exec 10<'/repo'",
      "exec 11<'/w/u/volumes/cfg'",
      "exec 12<'/w/u/volumes/cfg/one'",
      "exec 13<'/w/u/volumes/nested'",
      "exec 14<'/w/u/main.termination-log'",
      "mkdir -p '/app'",
      "mount --no-canonicalize --bind /proc/self/fd/10 '/app'",
      "mkdir -p '/etc/cfg'",
      "mount --no-canonicalize --bind /proc/self/fd/11 '/etc/cfg'",
      "mkdir -p '/etc'",
      "[ -e '/etc/one.conf' ] || : > '/etc/one.conf'",
      "mount --no-canonicalize --bind /proc/self/fd/12 '/etc/one.conf'",
      "mkdir -p '/etc/cfg/nested'",
      "mount --no-canonicalize --bind /proc/self/fd/13 '/etc/cfg/nested'",
      "mount -o remount,bind,ro '/etc/cfg/nested'",
      "mkdir -p '/dev'",
      "[ -e '/dev/termination-log' ] || : > '/dev/termination-log'",
      "mount --no-canonicalize --bind /proc/self/fd/14 '/dev/termination-log'",
      'exec 10<&- 11<&- 12<&- 13<&- 14<&-',
      "cd '/app/work dir'",
      'exec "$@"',
    ])
  })

  it('omits cd without a workingDir', () => {
    const script = buildMountScript({ imageRoot: '/r', mounts: [], terminationLog: { source: '/t', target: '/tl' } })
    expect(script).not.toContain('cd ')
    expect(script.endsWith('exec "$@"')).toBe(true)
  })
})

// The plan run for real, as the agent runs it (private mount namespace; needs root, as the agent does).
const asRoot = process.getuid?.() === 0
describe.skipIf(!asRoot)('the mount plan in a private mount namespace', () => {
  it('binds every source even when volumes cover /tmp, /var, /home and the parent of the node state beneath them', () => {
    // Node state under /tmp, as when the checkout itself is under /tmp.
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'dutil-mount-plan-'))
    try {
      const state = path.join(base, 'checkout', '.test', 'node', 'pod-uid')
      const image = path.join(base, 'checkout')
      const vol = (name: string) => {
        const d = path.join(state, 'volumes', name)
        fs.mkdirSync(d, { recursive: true })
        fs.writeFileSync(path.join(d, 'marker'), name)
        return d
      }
      const log = path.join(state, 'main.termination-log')
      fs.mkdirSync(state, { recursive: true })
      fs.writeFileSync(log, '')
      const parent = path.dirname(base) // the checkout's parent's parent: /tmp itself here
      const targets = { tmp: '/tmp', var: '/var', home: '/home', parent: path.join(base, 'checkout', '..') }
      const script = buildMountScript({
        imageRoot: image,
        mounts: Object.entries(targets).map(([name, target]) => ({
          source: vol(name),
          target,
          readOnly: name === 'var',
          file: false,
        })),
        terminationLog: { source: log, target: '/dev/termination-log' },
      })
      const check = [
        ...Object.entries(targets).map(
          ([name, target]) => `test "$(cat ${shellQuote(path.posix.normalize(target))}/marker)" = ${name}`,
        ),
        'test -d /app/.test/node',
        '! touch /var/probe 2>/dev/null',
        'echo done > /dev/termination-log',
        // No source descriptor reaches the container.
        'for fd in 10 11 12 13 14 15; do test ! -e /proc/$$/fd/$fd; done',
        'echo ok',
      ].join(' && ')
      const res = spawnSync('unshare', [...UNSHARE_ARGS, script, 'sh', '/bin/sh', '-c', check], { encoding: 'utf8' })
      expect(res.status, res.stderr + res.stdout).toBe(0)
      expect(res.stdout.trim()).toBe('ok')
      expect(fs.readFileSync(log, 'utf8')).toBe('done\n')
      expect(parent).toBe(os.tmpdir())
    } finally {
      fs.rmSync(base, { recursive: true, force: true })
    }
  })
})
