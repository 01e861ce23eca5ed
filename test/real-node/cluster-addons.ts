/**
 * What a cluster has besides its nodes, for the real-node tier: cluster DNS (CoreDNS, built from
 * its Go module into an image made here). Pure: the start script applies the manifest.
 */
export interface ClusterDnsOptions {
  image: string
  /** The kube-dns Service's ClusterIP: the kubelet's clusterDNS. */
  clusterIp: string
}

/**
 * CoreDNS as a Deployment in kube-system, labelled `k8s-app: kube-dns` like the kube-dns every
 * cluster has (the chart's runner NetworkPolicy allows DNS to exactly those pods). It answers for
 * cluster.local only: nothing is forwarded to a resolver off this machine.
 */
export function clusterDnsManifest(o: ClusterDnsOptions): string {
  return `apiVersion: v1
kind: ServiceAccount
metadata: { name: coredns, namespace: kube-system }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: "system:coredns" }
rules:
  - apiGroups: [""]
    resources: [endpoints, services, pods, namespaces]
    verbs: [list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: "system:coredns" }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns" }
subjects: [{ kind: ServiceAccount, name: coredns, namespace: kube-system }]
---
apiVersion: v1
kind: ConfigMap
metadata: { name: coredns, namespace: kube-system }
data:
  Corefile: |
    cluster.local:53 in-addr.arpa:53 {
      errors
      health :8080
      ready :8181
      kubernetes cluster.local in-addr.arpa {
        pods insecure
      }
      cache 5
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: coredns, namespace: kube-system, labels: { k8s-app: kube-dns } }
spec:
  replicas: 1
  selector: { matchLabels: { k8s-app: kube-dns } }
  template:
    metadata: { labels: { k8s-app: kube-dns } }
    spec:
      serviceAccountName: coredns
      securityContext:
        runAsNonRoot: true
        runAsUser: 65534
        # Port 53 without root or capabilities (a namespaced, safe sysctl).
        sysctls: [{ name: net.ipv4.ip_unprivileged_port_start, value: "53" }]
      containers:
        - name: coredns
          image: ${o.image}
          imagePullPolicy: Never
          args: [-conf, /etc/coredns/Corefile]
          ports:
            - { name: dns, containerPort: 53, protocol: UDP }
            - { name: dns-tcp, containerPort: 53, protocol: TCP }
          readinessProbe: { httpGet: { path: /ready, port: 8181 }, periodSeconds: 2 }
          livenessProbe: { httpGet: { path: /health, port: 8080 }, periodSeconds: 10 }
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: [ALL] } }
          resources: { limits: { memory: 128Mi }, requests: { cpu: 50m, memory: 32Mi } }
          volumeMounts: [{ name: config, mountPath: /etc/coredns, readOnly: true }]
      volumes: [{ name: config, configMap: { name: coredns } }]
---
apiVersion: v1
kind: Service
metadata: { name: kube-dns, namespace: kube-system, labels: { k8s-app: kube-dns } }
spec:
  selector: { k8s-app: kube-dns }
  clusterIP: ${o.clusterIp}
  ports:
    - { name: dns, port: 53, protocol: UDP, targetPort: 53 }
    - { name: dns-tcp, port: 53, protocol: TCP, targetPort: 53 }
`
}
