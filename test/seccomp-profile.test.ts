import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from './platform/platform.js'

/**
 * charts/dutil/files/chromium-sandbox-seccomp.json is what test/platform/tools/seccomp-profile
 * makes of containerd's default profile now (make seccomp-profile).
 */
const generator = join(process.env.DUTIL_CACHE ?? join(homedir(), '.cache', 'dutil'), 'bin', 'seccomp-profile')
const shipped = join(REPO_ROOT, 'charts', 'dutil', 'files', 'chromium-sandbox-seccomp.json')

interface Profile {
  defaultAction: string
  syscalls: Array<{ names: string[]; action: string; args?: unknown[] }>
}

describe("the chart's seccomp profile for Chromium's sandbox", () => {
  it('is generated from containerd’s default profile as it is now (make seccomp-profile)', () => {
    expect(existsSync(generator), `${generator}: run make binaries`).toBe(true)
    expect(execFileSync(generator, { encoding: 'utf8' }), 'run `make seccomp-profile`').toBe(
      readFileSync(shipped, 'utf8'),
    )
  })

  it('refuses what it does not name, and adds nothing but the namespace sandbox’s three calls', () => {
    const profile = JSON.parse(readFileSync(shipped, 'utf8')) as Profile
    expect(profile.defaultAction).toBe('SCMP_ACT_ERRNO')
    const unconditional = profile.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW' && !r.args?.length)
    const allowed = new Set(unconditional.flatMap((r) => r.names))
    for (const call of ['clone', 'unshare', 'chroot']) expect(allowed).toContain(call)
    // What a container without capabilities must never do stays refused.
    for (const call of ['mount', 'umount2', 'pivot_root', 'setns', 'bpf', 'init_module', 'kexec_load'])
      expect(allowed).not.toContain(call)
  })
})
