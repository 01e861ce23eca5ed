import { describe, expect, it } from 'vitest'
import { desiredNode, goArch, type HostFacts } from './node-registration.js'

const facts: HostFacts = {
  kubeletVersion: 'v1.37.1',
  architecture: 'amd64',
  kernelVersion: '6.1.0',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  machineID: 'm-1',
  bootID: 'b-1',
  hostname: 'host',
}

describe('desiredNode', () => {
  const since = new Date('2030-01-01T00:00:00Z')
  const now = new Date('2030-01-01T00:00:10.500Z')
  const node = desiredNode('dutil-dev-node', facts, now, since)

  it('is schedulable: labels, no taints, capacity including pods', () => {
    expect(node.metadata?.labels).toEqual({
      'kubernetes.io/hostname': 'dutil-dev-node',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
    })
    expect(node.spec?.taints).toBeUndefined()
    expect(node.spec?.unschedulable).toBeUndefined()
    for (const res of [node.status?.capacity, node.status?.allocatable]) {
      expect(res).toMatchObject({ cpu: '8', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' })
    }
  })

  it('is Ready with fresh heartbeats and no pressure', () => {
    const byType = Object.fromEntries((node.status?.conditions ?? []).map((c) => [c.type, c]))
    expect(byType.Ready).toMatchObject({
      status: 'True',
      reason: 'KubeletReady',
      lastHeartbeatTime: '2030-01-01T00:00:10Z',
    })
    for (const t of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      expect(byType[t]).toMatchObject({ status: 'False', lastTransitionTime: '2030-01-01T00:00:00Z' })
    }
  })

  it('reports loopback and host name addresses and node info', () => {
    expect(node.status?.addresses).toEqual([
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: 'dutil-dev-node' },
    ])
    expect(node.status?.nodeInfo).toMatchObject({
      kubeletVersion: 'v1.37.1',
      operatingSystem: 'linux',
      machineID: 'm-1',
    })
  })
})

describe('goArch', () => {
  it('maps Node architecture names to Go ones', () => {
    expect(goArch('x64')).toBe('amd64')
    expect(goArch('arm64')).toBe('arm64')
  })
})
