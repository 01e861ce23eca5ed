// Memory limits the way kubelet enforces them: each container with `resources.limits.memory`
// runs in a memory cgroup of its own with that limit, so the kernel OOM-kills it when it goes
// over, and the container is reported terminated with reason OOMKilled (exit code 137). Needs a
// writable memory controller (root; cgroup v1 `memory` hierarchy or cgroup v2 with `memory` in
// the root's subtree_control); elsewhere limits are not enforced and the agent says so at start.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  Pi: 1024 ** 5,
  Ei: 1024 ** 6,
}

/** Bytes of a Kubernetes memory quantity (`512Mi`, `1G`, `128974848`, `1e9`, `0.5Gi`); undefined when not one. */
export function memoryBytes(quantity: string | undefined): number | undefined {
  if (!quantity) return undefined
  const m = /^([0-9]+(?:\.[0-9]+)?(?:[eE][0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.exec(quantity.trim())
  if (!m) return undefined
  return Math.ceil(Number(m[1]) * UNITS[m[2] ?? ''])
}

export type CgroupVersion = 1 | 2

export interface MemoryCgroup {
  /** Moves a process (and the children it forks from then on) into the cgroup. */
  add(pid: number): void
  /** Whether the kernel OOM-killed a process of this cgroup. */
  oomKilled(): boolean
  remove(): void
}

export interface MemoryLimits {
  readonly version: CgroupVersion
  readonly root: string
  create(name: string, limitBytes: number): MemoryCgroup
}

function counter(file: string, name: string): number {
  try {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${name} `))
    return line ? Number(line.slice(name.length + 1)) : 0
  } catch {
    return 0
  }
}

/** The memory controller this agent may use, under `<hierarchy>/dutil-node-agent/<node>`; null when there is none. */
export function detectMemoryLimits(nodeName: string, sysfs = '/sys/fs/cgroup'): MemoryLimits | null {
  let version: CgroupVersion
  let base: string
  if (existsSync(path.join(sysfs, 'cgroup.controllers'))) {
    version = 2
    base = sysfs
    try {
      if (!readFileSync(path.join(sysfs, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('memory')) return null
    } catch {
      return null
    }
  } else if (existsSync(path.join(sysfs, 'memory', 'memory.limit_in_bytes'))) {
    version = 1
    base = path.join(sysfs, 'memory')
  } else {
    return null
  }
  const root = path.join(base, 'dutil-node-agent', nodeName)
  try {
    mkdirSync(root, { recursive: true })
    // v2: children of our own cgroups need the memory controller handed down.
    if (version === 2) {
      writeFileSync(path.join(base, 'dutil-node-agent', 'cgroup.subtree_control'), '+memory')
      writeFileSync(path.join(root, 'cgroup.subtree_control'), '+memory')
    }
  } catch {
    return null
  }
  return {
    version,
    root,
    create(name, limitBytes) {
      const dir = path.join(root, name)
      mkdirSync(dir, { recursive: true })
      if (version === 1) {
        writeFileSync(path.join(dir, 'memory.limit_in_bytes'), String(limitBytes))
      } else {
        writeFileSync(path.join(dir, 'memory.max'), String(limitBytes))
        // kubelet's behaviour: the whole container goes when one of its processes is chosen.
        writeFileSync(path.join(dir, 'memory.oom.group'), '1')
      }
      const eventsFile = path.join(dir, version === 1 ? 'memory.oom_control' : 'memory.events')
      return {
        add: (pid) => writeFileSync(path.join(dir, 'cgroup.procs'), String(pid)),
        oomKilled: () => counter(eventsFile, 'oom_kill') > 0,
        remove: () => {
          try {
            rmdirSync(dir)
          } catch {
            // Still busy or already gone: swept with the pod's other leftovers.
          }
        },
      }
    },
  }
}
