import { join } from 'node:path'

/**
 * The files a real node (containerd + kubelet) runs from, computed from where it lives and which
 * ports it may use. Pure: the start script writes them (test/real-node/real-node.ts).
 */
export interface RealNodeLayout {
  /** Everything of the node lives under here (the platform's state dir)... */
  dir: string
  /**
   * ...except containerd's content and snapshots (its root): kept outside the checkout between
   * runs, so images imported once are there the next time.
   */
  imageStore: string
  nodeName: string
  /** The API server's URL (https://127.0.0.1:<port>). */
  server: string
  /** The platform's CA, that signed the node's client certificate. */
  caFile: string
  /**
   * The node's address: on an interface the start script makes on this machine (the kubelet
   * refuses a loopback node IP; the API server reaches the kubelet here for logs and exec).
   */
  nodeIp: string
  /** kubelet's ports (API, healthz): off the defaults so another kubelet may run. */
  kubeletPort: number
  healthzPort: number
  /** Pod addresses, in network namespaces the runtime makes. */
  podCidr: string
  cgroupVersion: 1 | 2
  /** Where Debian's CNI plugins are. */
  cniBinDir: string
  sandboxImage: string
  /** Service ClusterIPs (the API server's --service-cluster-ip-range). */
  serviceCidr: string
  /** The cluster DNS Service's ClusterIP (CoreDNS). */
  clusterDns: string
  /** kube-proxy's metrics and healthz ports (loopback). */
  proxyMetricsPort: number
  proxyHealthzPort: number
}

export const paths = (l: RealNodeLayout) => ({
  containerdRoot: l.imageStore,
  containerdState: join(l.dir, 'containerd', 'state'),
  containerdConfig: join(l.dir, 'containerd', 'config.toml'),
  containerdSocket: join(l.dir, 'containerd', 'containerd.sock'),
  /** Per-registry settings (hosts.toml), read at each pull: a test's own plain-http registry. */
  registryHosts: join(l.dir, 'containerd', 'certs.d'),
  cniConfDir: join(l.dir, 'cni', 'net.d'),
  kubeletRoot: join(l.dir, 'kubelet'),
  /**
   * The chart's seccomp profile for Chromium's sandbox, where a platform team's node set-up puts
   * it (`<kubelet root>/seccomp/dutil/…`: the chart's README, Chromium's sandbox).
   */
  chromiumSeccompProfile: join(l.dir, 'kubelet', 'seccomp', 'dutil', 'chromium-sandbox-seccomp.json'),
  kubeletConfig: join(l.dir, 'kubelet', 'config.yaml'),
  kubeletKubeconfig: join(l.dir, 'kubelet', 'kubeconfig'),
  podLogs: join(l.dir, 'pod-logs'),
  kubeProxyConfig: join(l.dir, 'kube-proxy', 'config.yaml'),
  kubeProxyKubeconfig: join(l.dir, 'kube-proxy', 'kubeconfig'),
  /** Host sysctls the node changes, with their values before (restored at teardown). */
  sysctlsBefore: join(l.dir, 'sysctls-before.json'),
})

/** containerd 1.6 (config version 2) for the CRI: runc with cgroupfs, our sandbox image, Debian's CNI plugins. */
export function containerdConfig(l: RealNodeLayout): string {
  const p = paths(l)
  return `version = 2
root = "${p.containerdRoot}"
state = "${p.containerdState}"

[grpc]
  address = "${p.containerdSocket}"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${l.sandboxImage}"
  # This host may not lower oom_score_adj (no CAP_SYS_RESOURCE): without this every sandbox
  # fails with "can't get final child's PID from pipe".
  restrict_oom_score_adj = true
  enable_cdi = false

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = false

[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "${p.registryHosts}"

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "${l.cniBinDir}"
  conf_dir = "${p.cniConfDir}"
`
}

/** A bridge network with host-local addresses from the pod CIDR, and loopback. */
export function cniConflist(l: RealNodeLayout): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'dutil-pods',
      plugins: [
        {
          type: 'bridge',
          bridge: 'dutil-cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: l.podCidr }]], routes: [{ dst: '0.0.0.0/0' }] },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )
}

/** KubeletConfiguration: cgroupfs, containerd's socket, cgroup v1 accepted where the host has only v1. */
export function kubeletConfig(l: RealNodeLayout): string {
  const p = paths(l)
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://${p.containerdSocket}
${l.cgroupVersion === 1 ? '# Since 1.35 the kubelet refuses cgroup v1 unless told (KEP-5573); this host has only v1.\nfailCgroupV1: false\n' : ''}failSwapOn: false
address: ${l.nodeIp}
port: ${l.kubeletPort}
healthzBindAddress: 127.0.0.1
healthzPort: ${l.healthzPort}
readOnlyPort: 0
podCIDR: ${l.podCidr}
podLogsDir: ${p.podLogs}
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: false }
  x509: { clientCAFile: ${l.caFile} }
authorization:
  mode: AlwaysAllow
serializeImagePulls: false
# Images are imported, or pulled from a registry a test runs on this machine; none is removed.
imageGCHighThresholdPercent: 100
evictionHard: { memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%" }
# Pods resolve Service names through CoreDNS (cluster-addons.ts), which answers only for the
# cluster: nothing is forwarded off this machine.
clusterDNS: [${l.clusterDns}]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
registerNode: true
`
}

/** A kubeconfig for a node-local component (kubelet, kube-proxy) with its own client certificate. */
export function kubeletKubeconfig(l: RealNodeLayout, certFile: string, keyFile: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: { server: ${l.server}, certificate-authority: ${l.caFile} }
users:
- name: node
  user: { client-certificate: ${certFile}, client-key: ${keyFile} }
contexts:
- name: node
  context: { cluster: local, user: node }
current-context: node
`
}

/**
 * kube-proxy in iptables mode: Services (the API server's `kubernetes`, cluster DNS, the chart's
 * gateway) answer on their ClusterIPs in pods and on this host. The conntrack table size is left
 * alone; `tcpBeLiberal` keeps conntrack from marking out-of-window TCP segments INVALID, which
 * kube-proxy's and kube-router's INVALID-drop rules would otherwise drop: under load that stalled
 * a runner's download for a minute (the machine's value comes back at teardown). NodePorts only
 * on the node's address. A sync that fails (an iptables-restore beside kube-router's own) is
 * retried after `iptables.syncPeriod`: 5 s here, not the default 30 s, so a new Service's rules
 * are never a minute late on a busy test node.
 */
export function kubeProxyConfig(l: RealNodeLayout): string {
  const p = paths(l)
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: ${p.kubeProxyKubeconfig}
hostnameOverride: ${l.nodeName}
mode: iptables
clusterCIDR: ${l.podCidr}
bindAddress: ${l.nodeIp}
healthzBindAddress: 127.0.0.1:${l.proxyHealthzPort}
metricsBindAddress: 127.0.0.1:${l.proxyMetricsPort}
nodePortAddresses: [${l.nodeIp}/32]
iptables:
  syncPeriod: 5s
  minSyncPeriod: 1s
conntrack:
  maxPerCore: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
  tcpBeLiberal: true
`
}
