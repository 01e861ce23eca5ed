import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Where a machine's CPU time goes during a bench: CPU seconds per component, from /proc and, on
 * the real node, the kubelet's pod cgroups (cgroup v1 cpuacct, hierarchical: a finished pod's
 * time stays counted in its parents). Host processes are named by program; Node programs by the
 * script they run; pods by a name given from their pod's labels (`podNames`). What no living
 * process or pod cgroup accounts for (processes that ended during the window: on the dev node
 * agent tier, the runners themselves; runc and the containerd shims) is a row of its own.
 */
export type CpuSnapshot = Map<string, number>

const TICKS = 100
const CPUACCT = '/sys/fs/cgroup/cpuacct/kubepods'

/** Busy and total jiffies of all CPUs (/proc/stat's first line). */
export function cpuTimes(): { busy: number; total: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/)
  const n = fields.map(Number)
  const idle = n[3] + (n[4] ?? 0)
  const total = n.reduce((a, b) => a + b, 0)
  return { busy: total - idle, total }
}

/** The component a host process belongs to, by its program and command line. */
export function componentOf(comm: string, cmdline: string[]): string {
  if (comm === 'node' || comm.startsWith('node ') || comm === 'MainThread') {
    const script = cmdline.find((a) => a.endsWith('.js') || a.endsWith('.mjs')) ?? ''
    if (script.includes('/gateway/')) return 'gateway'
    if (script.includes('/operator/')) return 'operator'
    if (script.includes('/node-agent/')) return 'node agent'
    if (script.includes('vitest') || script.includes('/bench/')) return 'bench clients'
    return 'other Node processes'
  }
  if (comm.startsWith('kube-controller')) return 'kube-controller-manager'
  if (comm.startsWith('kube-apiserver')) return 'kube-apiserver'
  if (comm.startsWith('kube-scheduler')) return 'kube-scheduler'
  if (comm.startsWith('containerd-shim')) return 'containerd shims'
  if (comm === 'postgres' || comm === 'postmaster') return 'postgresql'
  if (comm.startsWith('redis-server')) return 'redis'
  if (/^(kworker|ksoftirqd|rcu_|kswapd|jbd2)/.test(comm)) return 'kernel threads'
  return comm
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return fallback
  }
}

/**
 * utime + stime of a /proc/<pid>/stat line, in seconds: the process's own, and with `children`
 * its reaped children's too (cutime + cstime).
 */
export function statSeconds(stat: string, children = false): number {
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
  const own = Number(fields[11]) + Number(fields[12])
  return (children ? own + Number(fields[13]) + Number(fields[14]) : own) / TICKS
}

/**
 * CPU seconds so far per component: host processes outside pods, each named pod's cgroup
 * (`podNames`: pod UID → component; pods not named there are counted only in the pod tree's
 * total), the whole pod tree, and the machine's busy total.
 */
export function cpuSnapshot(podNames: Map<string, string> = new Map()): CpuSnapshot {
  const out: CpuSnapshot = new Map()
  const add = (k: string, v: number) => out.set(k, (out.get(k) ?? 0) + v)
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    const stat = readOr(`/proc/${pid}/stat`, '')
    if (!stat) continue
    if (readOr(`/proc/${pid}/cgroup`, '').includes('kubepods')) continue
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    const cmdline = readOr(`/proc/${pid}/cmdline`, '').split('\0')
    add(`host: ${componentOf(comm, cmdline)}`, statSeconds(stat))
  }
  if (existsSync(CPUACCT)) {
    add('pods (all)', Number(readOr(join(CPUACCT, 'cpuacct.usage'), '0')) / 1e9)
    for (const qos of ['', 'burstable', 'besteffort']) {
      const dir = join(CPUACCT, qos)
      if (!existsSync(dir)) continue
      for (const pod of readdirSync(dir).filter((d) => d.startsWith('pod'))) {
        const name = podNames.get(pod.slice(3).replace(/_/g, '-'))
        if (name) add(`pod: ${name}`, Number(readOr(join(dir, pod, 'cpuacct.usage'), '0')) / 1e9)
      }
    }
  }
  add('machine busy', cpuTimes().busy / TICKS)
  return out
}

/**
 * CPU seconds per component between two snapshots, per completed job, largest first. The pod
 * tree's time that no named pod took is the runner pods' (those of the window are mostly gone
 * by its end). What the machine was busy beyond every row is processes that ended during the
 * window: on the dev node agent tier the runners themselves, on the real node runc and the shims.
 */
export function cpuShares(before: CpuSnapshot, after: CpuSnapshot, jobs: number): Array<[string, number]> {
  const delta = new Map<string, number>()
  for (const [k, v] of after) delta.set(k, v - (before.get(k) ?? 0))
  const busy = delta.get('machine busy') ?? 0
  const podsAll = delta.get('pods (all)') ?? 0
  delta.delete('machine busy')
  delta.delete('pods (all)')
  const named = [...delta].filter(([k]) => k.startsWith('pod: ')).reduce((a, [, v]) => a + v, 0)
  if (podsAll > 0) delta.set('pod: runner pods', Math.max(0, podsAll - named))
  const counted = [...delta.values()].reduce((a, v) => a + Math.max(0, v), 0)
  delta.set('processes that ended during the run', Math.max(0, busy - counted))
  const rows = [...delta]
    .filter(([, v]) => v > 0.01 * busy)
    .map(([k, v]): [string, number] => [k, v / Math.max(1, jobs)])
    .sort((a, b) => b[1] - a[1])
  rows.push(['machine busy, all', busy / Math.max(1, jobs)])
  return rows
}

/** A markdown table of `cpuShares`: CPU ms per completed job and share of the busy time. */
export function cpuSharesTable(title: string, rows: Array<[string, number]>): string[] {
  const busy = rows.at(-1)?.[1] ?? 0
  return [
    `| ${title}: component | CPU ms per job | share |`,
    '|---|---|---|',
    ...rows.map(([k, v]) => `| ${k} | ${(v * 1000).toFixed(0)} | ${((100 * v) / (busy || 1)).toFixed(0)} % |`),
  ]
}
