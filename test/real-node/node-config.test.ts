import { describe, expect, it } from 'vitest'
import { cniConflist, containerdConfig, kubeletConfig, kubeletKubeconfig, type RealNodeLayout } from './node-config.js'

const layout = (cgroupVersion: 1 | 2): RealNodeLayout => ({
  dir: '/state/real-node',
  nodeName: 'dutil-real-node',
  server: 'https://127.0.0.1:16443',
  nodeIp: '10.250.0.1',
  caFile: '/state/pki/ca.crt',
  kubeletPort: 20250,
  healthzPort: 20248,
  podCidr: '10.244.0.0/24',
  cgroupVersion,
  cniBinDir: '/usr/lib/cni',
  sandboxImage: 'dutil.local/pause:3.10',
})

describe('real node configuration', () => {
  it('accepts cgroup v1 only on a v1 host', () => {
    expect(kubeletConfig(layout(1))).toContain('failCgroupV1: false')
    expect(kubeletConfig(layout(2))).not.toContain('failCgroupV1')
  })

  it('points the kubelet at the node-local containerd socket, off the default ports, cgroupfs', () => {
    const cfg = kubeletConfig(layout(1))
    expect(cfg).toContain('containerRuntimeEndpoint: unix:///state/real-node/containerd/containerd.sock')
    expect(cfg).toContain('cgroupDriver: cgroupfs')
    expect(cfg).toContain('port: 20250')
    expect(cfg).toContain('readOnlyPort: 0')
    expect(cfg).toContain('address: 10.250.0.1')
  })

  it('gives containerd our sandbox image, Debian CNI plugins and the oom_score_adj restriction this host needs', () => {
    const cfg = containerdConfig(layout(1))
    expect(cfg).toContain('sandbox_image = "dutil.local/pause:3.10"')
    expect(cfg).toContain('restrict_oom_score_adj = true')
    expect(cfg).toContain('bin_dir = "/usr/lib/cni"')
    expect(cfg).toContain('SystemdCgroup = false')
  })

  it('hands out pod addresses from the pod CIDR on a bridge', () => {
    const net = JSON.parse(cniConflist(layout(1)))
    expect(net.plugins[0]).toMatchObject({ type: 'bridge', ipam: { type: 'host-local', ranges: [[{ subnet: '10.244.0.0/24' }]] } })
  })

  it('authenticates the kubelet with its own client certificate against the platform CA', () => {
    const kc = kubeletKubeconfig(layout(1), '/n.crt', '/n.key')
    expect(kc).toContain('server: https://127.0.0.1:16443')
    expect(kc).toContain('certificate-authority: /state/pki/ca.crt')
    expect(kc).toContain('client-certificate: /n.crt')
  })
})
