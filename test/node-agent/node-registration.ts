// Registers the Node the agent stands in for and keeps it alive like kubelet: a Ready condition
// with a fresh heartbeat on the status subresource and the Lease kube-node-lease/<node>, both
// about every 10 s. The Node is never deleted (PodGC force-deletes pods of missing nodes).
import fs from 'node:fs'
import os from 'node:os'
import {
  type CoordinationV1Api,
  type CoreV1Api,
  PatchStrategy,
  V1MicroTime,
  type V1Node,
  setHeaderOptions,
} from '@kubernetes/client-node'
import { errorMessage, isConflict, isNotFound } from './kube-errors.js'
import type { Logger } from './logger.js'
import { NODE_IP } from './node-constants.js'
import { rfc3339 } from './pod-status.js'
import { withRetry } from './retry.js'

export const LEASE_NAMESPACE = 'kube-node-lease'
export const LEASE_DURATION_SECONDS = 40
export const HEARTBEAT_INTERVAL_MS = 10_000
export const RUNTIME_VERSION = 'dutil-agent://0.1.0'

/** Fixed, generous capacity: pods are host processes, requests only need to fit for the scheduler. */
export const NODE_CAPACITY = { cpu: '8', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' } as const

export interface HostFacts {
  kubeletVersion: string
  architecture: string
  kernelVersion: string
  osImage: string
  machineID: string
  bootID: string
  hostname: string
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch)

function readTrimmed(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim()
  } catch {
    return ''
  }
}

export function goArch(nodeArch: string): string {
  return (
    (
      { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' } as Record<
        string,
        string
      >
    )[nodeArch] ?? nodeArch
  )
}

export function hostFacts(kubeletVersion: string): HostFacts {
  const osRelease = readTrimmed('/etc/os-release')
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1]
  return {
    kubeletVersion,
    architecture: goArch(process.arch),
    kernelVersion: os.release(),
    osImage: pretty ?? 'Linux',
    machineID: readTrimmed('/etc/machine-id'),
    bootID: readTrimmed('/proc/sys/kernel/random/boot_id'),
    hostname: os.hostname(),
  }
}

export function nodeLabels(nodeName: string, facts: HostFacts): Record<string, string> {
  return {
    'kubernetes.io/hostname': nodeName,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': facts.architecture,
  }
}

/** The four kubelet node conditions, all healthy, heartbeat `now`, transition at `since`. */
export function nodeConditions(now: Date, since: Date) {
  const c = (type: string, status: 'True' | 'False', reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: rfc3339(now),
    lastTransitionTime: rfc3339(since),
  })
  return [
    c('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
    c('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    c('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    c('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
  ]
}

export function nodeStatus(nodeName: string, facts: HostFacts, now: Date, since: Date) {
  return {
    capacity: { ...NODE_CAPACITY },
    allocatable: { ...NODE_CAPACITY },
    conditions: nodeConditions(now, since),
    addresses: [
      { type: 'InternalIP', address: NODE_IP },
      { type: 'Hostname', address: nodeName },
    ],
    nodeInfo: {
      architecture: facts.architecture,
      bootID: facts.bootID,
      containerRuntimeVersion: RUNTIME_VERSION,
      kernelVersion: facts.kernelVersion,
      kubeProxyVersion: '',
      kubeletVersion: facts.kubeletVersion,
      machineID: facts.machineID,
      operatingSystem: 'linux',
      osImage: facts.osImage,
      systemUUID: facts.machineID,
    },
  }
}

export function desiredNode(nodeName: string, facts: HostFacts, now: Date, since: Date): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: nodeName, labels: nodeLabels(nodeName, facts) },
    spec: {},
    // Times are RFC 3339 strings; the client's serializer passes non-Date values through unchanged.
    status: nodeStatus(nodeName, facts, now, since) as unknown as V1Node['status'],
  }
}

export class NodeRegistration {
  private readonly since = new Date()
  private nodeUid?: string
  private timer?: NodeJS.Timeout
  private beating = false
  private readonly stopped = new AbortController()

  constructor(
    private readonly core: CoreV1Api,
    private readonly coordination: CoordinationV1Api,
    private readonly log: Logger,
    private readonly nodeName: string,
    private readonly facts: HostFacts,
  ) {}

  /** Creates the Node, or takes over an existing one (labels, no taints, schedulable). Retries until done. */
  async register(signal?: AbortSignal): Promise<void> {
    const name = this.nodeName
    const opts = { log: this.log, signal: AbortSignal.any([this.stopped.signal, ...(signal ? [signal] : [])]) }
    await withRetry(
      'register node',
      async () => {
        try {
          await this.core.createNode({ body: desiredNode(name, this.facts, new Date(), this.since) })
          this.log.info({ node: name }, 'node created')
        } catch (err) {
          if (!isConflict(err)) throw err
          this.log.info({ node: name }, 'node exists, taking it over')
        }
        // The TaintNodesByCondition admission plugin gives every new Node the taint
        // node.kubernetes.io/not-ready:NoSchedule; node-lifecycle-controller (not run here) would
        // lift it once Ready. Labels are ours; no taints, schedulable.
        const patched = await this.core.patchNode(
          {
            name,
            body: { metadata: { labels: nodeLabels(name, this.facts) }, spec: { taints: null, unschedulable: null } },
          },
          mergePatch,
        )
        this.nodeUid = patched.metadata?.uid
      },
      opts,
    )
    await withRetry('update node status', () => this.patchStatus(), opts)
    await withRetry('renew node lease', () => this.renewLease(), opts)
  }

  startHeartbeat(): void {
    this.timer = setInterval(() => void this.heartbeat(), HEARTBEAT_INTERVAL_MS)
  }

  stop(): void {
    clearInterval(this.timer)
    this.stopped.abort()
  }

  private async heartbeat(): Promise<void> {
    if (this.beating) return
    this.beating = true
    try {
      await this.patchStatus()
    } catch (err) {
      if (isNotFound(err)) {
        this.log.warn({ node: this.nodeName }, 'node disappeared, registering again')
        await this.register().catch((e: unknown) =>
          this.log.error({ err: errorMessage(e) }, 'node registration failed'),
        )
      } else {
        this.log.warn({ err: errorMessage(err) }, 'node heartbeat failed')
      }
    }
    try {
      await this.renewLease()
    } catch (err) {
      this.log.warn({ err: errorMessage(err) }, 'node lease renewal failed')
    } finally {
      this.beating = false
    }
  }

  private async patchStatus(): Promise<void> {
    await this.core.patchNodeStatus(
      { name: this.nodeName, body: { status: nodeStatus(this.nodeName, this.facts, new Date(), this.since) } },
      mergePatch,
    )
  }

  private async renewLease(): Promise<void> {
    const name = this.nodeName
    const namespace = LEASE_NAMESPACE
    const spec = { holderIdentity: name, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: new V1MicroTime() }
    try {
      const lease = await this.coordination.readNamespacedLease({ name, namespace })
      lease.spec = { ...lease.spec, ...spec }
      await this.coordination.replaceNamespacedLease({ name, namespace, body: lease })
    } catch (err) {
      if (!isNotFound(err)) throw err
      await this.coordination.createNamespacedLease({
        namespace,
        body: {
          metadata: {
            name,
            namespace,
            ...(this.nodeUid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: this.nodeUid }] } : {}),
          },
          spec,
        },
      })
      this.log.info({ node: name }, 'node lease created')
    }
  }
}
