import { describe, expect, it } from 'vitest'
import { componentOf, cpuShares, cpuSharesTable, cpuSnapshot, statSeconds } from './cpu-shares.js'

describe('cpu shares', () => {
  it('names Node programs by their script and other programs by name', () => {
    expect(componentOf('node', ['node', '/r/dist/gateway/main.js'])).toBe('gateway')
    expect(componentOf('node', ['node', '--x', '/r/dist/operator/main.js'])).toBe('operator')
    expect(componentOf('node', ['node', '/r/node_modules/vitest/vitest.mjs', 'run'])).toBe('bench clients')
    expect(componentOf('kube-controller', ['kube-controller-manager'])).toBe('kube-controller-manager')
    expect(componentOf('containerd-shim', [])).toBe('containerd shims')
    expect(componentOf('etcd', [])).toBe('etcd')
    expect(componentOf('kworker/u8:2-ext4-rsv-conversion', [])).toBe('kernel threads')
  })

  it("reads a process's own user and system time, a name with spaces and parentheses included", () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i))
    fields[11] = '250' // utime
    fields[12] = '50' // stime
    fields[13] = '9999' // children's: not counted
    fields[14] = '1' // children's
    expect(statSeconds(`42 (my (odd) prog) ${fields.join(' ')}`)).toBe(3)
    // With its reaped children's (a client that ran curl): 250 + 50 + 9999 + 1 ticks.
    expect(statSeconds(`42 (my (odd) prog) ${fields.join(' ')}`, true)).toBe(103)
  })

  it('charges the pod tree beyond named pods to runner pods and the busy rest to ended processes', () => {
    const before = new Map([
      ['host: etcd', 10],
      ['pod: gateway', 5],
      ['pods (all)', 20],
      ['machine busy', 100],
    ])
    const after = new Map([
      ['host: etcd', 14],
      ['pod: gateway', 7],
      ['pods (all)', 30],
      ['machine busy', 120],
    ])
    const rows = Object.fromEntries(cpuShares(before, after, 10))
    expect(rows['pod: runner pods']).toBeCloseTo(0.8)
    expect(rows['host: etcd']).toBeCloseTo(0.4)
    expect(rows['pod: gateway']).toBeCloseTo(0.2)
    expect(rows['processes that ended during the run']).toBeCloseTo(0.6)
    expect(rows['machine busy, all']).toBeCloseTo(2)
    const table = cpuSharesTable('split-pdf', cpuShares(before, after, 10))
    expect(table[2]).toBe('| pod: runner pods | 800 | 40 % |')
  })

  it('snapshots this machine: this process and the busy total grow', async () => {
    const a = cpuSnapshot()
    const end = Date.now() + 300
    while (Date.now() < end) Math.sqrt(Math.random())
    const b = cpuSnapshot()
    expect(b.get('machine busy')!).toBeGreaterThan(a.get('machine busy')!)
    const mine = [...b.keys()].filter((k) => k.startsWith('host: '))
    expect(mine.length).toBeGreaterThan(0)
  })
})
