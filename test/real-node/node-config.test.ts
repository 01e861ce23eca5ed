import { describe, expect, it } from 'vitest'
import YAML from 'yaml'
import { clusterDnsManifest } from './cluster-addons.js'
import {
  cniConflist,
  containerdConfig,
  kubeletConfig,
  kubeletKubeconfig,
  kubeProxyConfig,
  type RealNodeLayout,
} from './node-config.js'

const layout = (cgroupVersion: 1 | 2): RealNodeLayout => ({
  dir: '/state/real-node',
  imageStore: '/cache/real-node/containerd',
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
  serviceCidr: '10.0.0.0/24',
  clusterDns: '10.0.0.10',
  proxyMetricsPort: 20249,
  proxyHealthzPort: 20256,
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
    expect(net.plugins[0]).toMatchObject({
      type: 'bridge',
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.244.0.0/24' }]] },
    })
  })

  it('authenticates the kubelet with its own client certificate against the platform CA', () => {
    const kc = kubeletKubeconfig(layout(1), '/n.crt', '/n.key')
    expect(kc).toContain('server: https://127.0.0.1:16443')
    expect(kc).toContain('certificate-authority: /state/pki/ca.crt')
    expect(kc).toContain('client-certificate: /n.crt')
  })

  it('points pods at the cluster DNS Service and runs kube-proxy in iptables mode without touching conntrack sysctls', () => {
    expect(kubeletConfig(layout(1))).toContain('clusterDNS: [10.0.0.10]')
    const proxy = YAML.parse(kubeProxyConfig(layout(1)))
    expect(proxy).toMatchObject({
      kind: 'KubeProxyConfiguration',
      mode: 'iptables',
      clusterCIDR: '10.244.0.0/24',
      hostnameOverride: 'dutil-real-node',
      conntrack: { maxPerCore: 0, tcpBeLiberal: true },
      iptables: { syncPeriod: '5s', minSyncPeriod: '1s' },
    })
    expect(proxy.clientConnection.kubeconfig).toBe('/state/real-node/kube-proxy/kubeconfig')
  })

  it('keeps containerd content outside the state directory, so imported images outlive the run', () => {
    expect(containerdConfig(layout(1))).toContain('root = "/cache/real-node/containerd"')
    expect(containerdConfig(layout(1))).toContain('state = "/state/real-node/containerd/state"')
  })
})

describe('cluster DNS', () => {
  it('runs CoreDNS as kube-dns (the label the runner NetworkPolicy allows), answering for cluster.local only', () => {
    const docs = YAML.parseAllDocuments(
      clusterDnsManifest({ image: 'dutil.local/coredns:dev', clusterIp: '10.0.0.10' }),
    ).map((d) => d.toJS())
    const deploy = docs.find((d) => d.kind === 'Deployment')
    const service = docs.find((d) => d.kind === 'Service')
    expect(deploy.spec.template.metadata.labels['k8s-app']).toBe('kube-dns')
    expect(deploy.metadata.namespace).toBe('kube-system')
    expect(deploy.spec.template.spec.containers[0].imagePullPolicy).toBe('Never')
    expect(service).toMatchObject({
      metadata: { name: 'kube-dns', namespace: 'kube-system' },
      spec: { clusterIP: '10.0.0.10' },
    })
    const corefile = docs.find((d) => d.kind === 'ConfigMap').data.Corefile as string
    expect(corefile).toContain('kubernetes cluster.local')
    expect(corefile).not.toMatch(/forward|proxy/)
  })
})
