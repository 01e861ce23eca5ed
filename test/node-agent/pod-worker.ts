// One pod bound to this node, from first sight to removal: prepare (volumes, env), run init
// containers one by one then the containers together, report every transition through
// pods/status, enforce spec.activeDeadlineSeconds, terminate on deletion (SIGTERM, grace,
// SIGKILL, terminal status, final DELETE). All state changes happen synchronously on the event
// loop; `reconcile` is level-based and safe to call on every watch event.
import fs from 'node:fs/promises'
import path from 'node:path'
import type { V1Container, V1Pod } from '@kubernetes/client-node'
import { PodConfigError } from './config-error.js'
import { type ContainerProcess, startContainerProcess } from './container-process.js'
import { expandCommand, resolveContainerEnv } from './env-resolver.js'
import { containerProcessEnv, podHome } from './pod-env.js'
import { errorMessage, isNotFound } from './kube-errors.js'
import type { Logger } from './logger.js'
import { buildMountScript } from './mount-script.js'
import type { PodApi } from './pod-api.js'
import { collectReferences } from './pod-objects.js'
import {
  type ContainerRecord,
  DEADLINE_MESSAGE,
  type PodRecord,
  finalPhase,
  hasStartedContainers,
  isTerminalPhase,
  markProcessesLost,
  newPodRecord,
  recordFromApiStatus,
  terminateUnstarted,
} from './pod-record.js'
import { buildPodStatus } from './pod-status.js'
import { AbortedError, sleep, withRetry } from './retry.js'
import { memoryBytes, type MemoryCgroup, type MemoryLimits } from './memory-limits.js'
import { readTerminationMessage } from './termination-message.js'
import { containerMounts, materializeVolumes, planVolume } from './volumes.js'

export interface WorkerContext {
  log: Logger
  api: PodApi
  /** Parent of the per-pod directories. */
  workDir: string
  imageRoot: string
  /** KUBERNETES_SERVICE_* variables for the real API server. */
  serviceEnv: ReadonlyMap<string, string>
  /** The agent's own environment: its PATH and locale stand in for the image's (pod-env.ts). */
  baseEnv: NodeJS.ProcessEnv
  /** Whether this node has an image (others cannot be pulled: the pod waits in ErrImagePull). */
  hasImage: (image: string) => boolean
  /** Memory cgroups for containers with a memory limit; null where the host gives none. */
  memoryLimits: MemoryLimits | null
}

/** Waiting between start attempts of a pod whose configuration is not (yet) satisfiable. */
export const CONFIG_RETRY_MS = 5_000
/** Status writes that failed permanently are tried again after this long. */
export const STATUS_RETRY_MS = 30_000
export const DEFAULT_GRACE_SECONDS = 30
/** Grace for processes of pods whose API object vanished (force deletion). */
export const GONE_GRACE_SECONDS = 2
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log'

/** kubelet's container restart back-off: 10 s doubling up to 5 min. */
export function restartBackoffMs(restartCount: number): number {
  return Math.min(300_000, 10_000 * 2 ** restartCount)
}

type Stage = 'pending' | 'starting' | 'running' | 'finished'
type TerminationCause = 'deletion' | 'deadline' | 'external' | 'gone' | 'shutdown'

interface PreparedContainer {
  argv: string[]
  env: NodeJS.ProcessEnv
  script: string
  logFile: string
  messageFile: string
  messagePolicy: string | undefined
  /** resources.limits.memory in bytes, enforced by a memory cgroup when the host allows. */
  memoryLimitBytes: number | undefined
}

function graceSecondsForDeletion(pod: V1Pod): number {
  return pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS
}

function graceSecondsForKill(pod: V1Pod): number {
  return pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS
}

export class PodWorker {
  readonly uid: string
  readonly namespace: string
  readonly name: string
  private pod: V1Pod
  private readonly rec: PodRecord
  private stage: Stage
  private readonly log: Logger
  private readonly podDir: string
  private readonly processes = new Map<string, ContainerProcess>()
  private termination?: { cause: TerminationCause; killAt: number; killTimer?: NodeJS.Timeout }
  /** Aborted when the worker closes (pod gone, agent stopping): ends API retries. */
  private readonly lifetime = new AbortController()
  /** Aborted when termination begins: ends restart back-offs. */
  private readonly restarts = new AbortController()
  private closed = false
  private retryTimer?: NodeJS.Timeout
  private deadlineTimer?: NodeJS.Timeout
  private deadlineDue?: number
  private statusDirty = false
  private statusLoop?: Promise<void>
  private terminalWritten = false
  private finalDelete: 'none' | 'inflight' | 'done' = 'none'
  private lifecycle?: Promise<void>
  private starting?: Promise<void>
  private lastWaiting?: string
  /** JSON of the last status written, to skip identical writes. */
  private lastWritten?: string

  constructor(
    private readonly ctx: WorkerContext,
    pod: V1Pod,
  ) {
    this.pod = pod
    this.uid = pod.metadata?.uid ?? ''
    this.namespace = pod.metadata?.namespace ?? ''
    this.name = pod.metadata?.name ?? ''
    this.log = ctx.log.child({ pod: `${this.namespace}/${this.name}`, uid: this.uid })
    this.podDir = path.join(ctx.workDir, this.uid)
    if (isTerminalPhase(pod.status?.phase)) {
      // Finished before this agent saw it (agent restart): only the final delete may remain.
      this.rec = recordFromApiStatus(pod)
      this.stage = 'finished'
      this.terminalWritten = true
    } else if (hasStartedContainers(pod)) {
      // Started by an earlier agent whose processes are gone: fail it, as kubelet does for
      // containers that vanished.
      this.rec = recordFromApiStatus(pod)
      markProcessesLost(this.rec, new Date())
      this.stage = 'finished'
      this.log.warn({ phase: pod.status?.phase }, 'pod was started by an earlier agent, marking it failed')
      this.requestStatus()
    } else {
      this.rec = newPodRecord(pod)
      this.stage = 'pending'
    }
  }

  /** Latest object from the watch. */
  update(pod: V1Pod): void {
    if (pod.metadata?.uid !== this.uid || this.closed) return
    this.pod = pod
    this.reconcile()
  }

  /** The pod object no longer exists: stop everything and remove the scratch directory. */
  async gone(): Promise<void> {
    if (this.closed) return
    this.log.info({ stage: this.stage }, 'pod removed from the API server')
    this.close()
    this.beginTermination('gone', GONE_GRACE_SECONDS)
    await this.starting
    await this.lifecycle
    await fs
      .rm(this.podDir, { recursive: true, force: true })
      .catch((err: unknown) => this.log.warn({ err, dir: this.podDir }, 'could not remove pod directory'))
  }

  /** The agent is stopping: kill processes (SIGTERM, SIGKILL after `graceSeconds`), write nothing. */
  async shutdown(graceSeconds: number): Promise<void> {
    if (!this.closed) this.close()
    this.beginTermination('shutdown', graceSeconds)
    await this.starting
    await this.lifecycle
  }

  /** Last resort at agent exit: SIGKILL every process group at once. */
  killNow(): void {
    for (const proc of this.processes.values()) proc.signal('SIGKILL')
  }

  private close(): void {
    this.closed = true
    this.lifetime.abort()
    clearTimeout(this.retryTimer)
    clearTimeout(this.deadlineTimer)
  }

  private reconcile(): void {
    if (this.closed) return
    const pod = this.pod
    this.armDeadline()
    if (pod.metadata?.deletionTimestamp) {
      this.handleDeletion()
      return
    }
    const serverPhase = pod.status?.phase
    if (isTerminalPhase(serverPhase) && this.stage !== 'finished') {
      // Someone else declared the pod finished: kubelet then stops its containers.
      if (this.stage === 'running') this.beginTermination('external', graceSecondsForKill(pod))
      else if (this.stage === 'pending') this.finish('external')
      return
    }
    if (this.stage === 'pending' && !this.retryTimer) {
      this.starting = this.start().catch((err: unknown) => this.log.error({ err }, 'pod start failed'))
    }
  }

  private handleDeletion(): void {
    switch (this.stage) {
      case 'pending':
        this.finish('deletion')
        return
      case 'starting':
        return // start() looks again once preparation is done
      case 'running':
        this.beginTermination('deletion', graceSecondsForDeletion(this.pod))
        return
      case 'finished':
        if (this.terminalWritten && this.finalDelete === 'none') this.issueFinalDelete()
        return
    }
  }

  // ---- deadline ----

  private armDeadline(): void {
    const seconds = this.pod.spec?.activeDeadlineSeconds
    if (!seconds || !this.rec.startTime || this.stage === 'finished' || this.termination) {
      clearTimeout(this.deadlineTimer)
      this.deadlineTimer = undefined
      this.deadlineDue = undefined
      return
    }
    const due = this.rec.startTime.getTime() + seconds * 1000
    if (this.deadlineTimer && this.deadlineDue === due) return
    clearTimeout(this.deadlineTimer)
    this.deadlineDue = due
    this.deadlineTimer = setTimeout(() => this.onDeadline(), Math.max(0, due - Date.now()))
  }

  private deadlinePassed(): boolean {
    return this.deadlineDue !== undefined && Date.now() >= this.deadlineDue
  }

  private onDeadline(): void {
    this.deadlineTimer = undefined
    if (this.closed || this.termination) return
    this.log.info({ activeDeadlineSeconds: this.pod.spec?.activeDeadlineSeconds }, 'pod deadline exceeded')
    if (this.stage === 'pending') this.finish('deadline')
    else if (this.stage === 'running') this.beginTermination('deadline', graceSecondsForKill(this.pod))
    // 'starting': start() checks deadlinePassed() when preparation ends.
  }

  // ---- start ----

  private async start(): Promise<void> {
    this.stage = 'starting'
    this.rec.startTime ??= new Date()
    this.armDeadline()
    let prepared: Map<string, PreparedContainer>
    try {
      prepared = await this.prepare()
    } catch (err) {
      if (this.closed) return
      this.stage = 'pending'
      this.onStartFailure(err)
      return
    }
    if (this.closed) return
    if (this.pod.metadata?.deletionTimestamp || isTerminalPhase(this.pod.status?.phase) || this.deadlinePassed()) {
      this.stage = 'pending'
      if (this.deadlinePassed() && !this.pod.metadata?.deletionTimestamp) this.finish('deadline')
      else this.reconcile()
      return
    }
    this.stage = 'running'
    this.lastWaiting = undefined
    this.log.info({ containers: [...prepared.keys()] }, 'pod starting')
    this.lifecycle = this.runAll(prepared)
      .catch((err: unknown) => this.log.error({ err }, 'pod lifecycle failed'))
      .then(() => this.finish())
  }

  private onStartFailure(err: unknown): void {
    const configError =
      err instanceof PodConfigError
        ? err
        : new PodConfigError(`preparing the pod failed: ${errorMessage(err)}`, 'ContainerCreating')
    // The first container that would start carries the error, as with kubelet.
    const targets = this.rec.initContainers.length > 0 ? [this.rec.initContainers[0]] : this.rec.containers
    for (const c of targets) c.state = { kind: 'waiting', reason: configError.reason, message: configError.message }
    const key = `${configError.reason}: ${configError.message}`
    if (key !== this.lastWaiting) {
      this.lastWaiting = key
      this.log.warn({ reason: configError.reason, message: configError.message }, 'pod cannot start yet, will retry')
      this.requestStatus()
    }
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined
      this.reconcile()
    }, CONFIG_RETRY_MS)
  }

  private async prepare(): Promise<Map<string, PreparedContainer>> {
    const pod = this.pod
    await fs.mkdir(podHome(this.podDir), { recursive: true })
    const objects = await this.ctx.api.fetchObjects(this.namespace, collectReferences(pod))
    const plans = (pod.spec?.volumes ?? []).map((v) => planVolume(pod, v, objects))
    const volumePaths = await materializeVolumes(this.podDir, plans, (audience, seconds) =>
      this.ctx.api.requestToken(pod, audience, seconds),
    )
    const prepared = new Map<string, PreparedContainer>()
    const all: V1Container[] = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]
    for (const c of all) {
      if (!c.image || !this.ctx.hasImage(c.image)) {
        const reason =
          this.lastWaiting?.startsWith('ErrImagePull') || this.lastWaiting?.startsWith('ImagePullBackOff')
            ? 'ImagePullBackOff'
            : 'ErrImagePull'
        throw new PodConfigError(
          `Failed to pull image "${c.image ?? ''}": the node does not have it and no registry is reachable from here`,
          reason,
        )
      }
      const env = resolveContainerEnv(pod, c, objects, this.ctx.serviceEnv)
      const argv = expandCommand([...(c.command ?? []), ...(c.args ?? [])], env)
      const messageFile = path.join(this.podDir, `${c.name}.termination-log`)
      await fs.writeFile(messageFile, '')
      const script = buildMountScript({
        imageRoot: this.ctx.imageRoot,
        mounts: await containerMounts(pod, c, volumePaths),
        terminationLog: { source: messageFile, target: c.terminationMessagePath || DEFAULT_TERMINATION_MESSAGE_PATH },
        workingDir: c.workingDir,
      })
      prepared.set(c.name, {
        argv,
        env: containerProcessEnv(this.ctx.baseEnv, this.podDir, pod.spec?.hostname || this.name, env),
        script,
        logFile: path.join(this.podDir, `${c.name}.log`),
        messageFile,
        messagePolicy: c.terminationMessagePolicy,
        memoryLimitBytes: memoryBytes(c.resources?.limits?.memory),
      })
    }
    return prepared
  }

  // ---- containers ----

  private async runAll(prepared: Map<string, PreparedContainer>): Promise<void> {
    for (const rec of this.rec.initContainers) {
      const ok = await this.runWithRestarts(rec, prepared.get(rec.name)!, true)
      if (!ok) return
    }
    if (this.termination) return
    await Promise.all(this.rec.containers.map((rec) => this.runWithRestarts(rec, prepared.get(rec.name)!, false)))
  }

  /** Runs a container until it is done for good; true if it ended with exit code 0. */
  private async runWithRestarts(rec: ContainerRecord, prep: PreparedContainer, init: boolean): Promise<boolean> {
    const policy = this.rec.restartPolicy
    for (;;) {
      if (this.termination || this.closed) return false
      const exitCode = await this.runOnce(rec, prep)
      if (exitCode === undefined) return false
      const restart =
        !this.termination &&
        (init
          ? policy !== 'Never' && exitCode !== 0
          : policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0))
      if (!restart) return exitCode === 0
      const delayMs = restartBackoffMs(rec.restartCount)
      if (rec.state.kind === 'terminated') rec.lastTerminated = rec.state
      rec.state = {
        kind: 'waiting',
        reason: 'CrashLoopBackOff',
        message: `back-off ${delayMs / 1000}s restarting failed container=${rec.name} pod=${this.name}_${this.namespace}(${this.uid})`,
      }
      this.requestStatus()
      try {
        await sleep(delayMs, this.restarts.signal)
      } catch {
        return false
      }
      rec.restartCount++
    }
  }

  /** One run of a container; undefined if it was not started because the pod is terminating. */
  private async runOnce(rec: ContainerRecord, prep: PreparedContainer): Promise<number | undefined> {
    if (prep.argv.length === 0) {
      const now = new Date()
      rec.state = {
        kind: 'terminated',
        exitCode: 128,
        reason: 'NoCommand',
        message: 'container has no command: the dutil node agent cannot use image entrypoints',
        startedAt: now,
        finishedAt: now,
      }
      this.log.warn({ container: rec.name }, 'container has no command')
      this.requestStatus()
      return 128
    }
    await fs.writeFile(prep.messageFile, '')
    if (this.termination || this.closed) return undefined
    const proc = startContainerProcess({ script: prep.script, argv: prep.argv, env: prep.env, logPath: prep.logFile })
    const cgroup = this.limitMemory(rec, prep, proc.pid)
    const startedAt = new Date()
    const containerId = `dutil-agent://${proc.pid ?? 'none'}`
    rec.state = { kind: 'running', startedAt, containerId }
    this.processes.set(rec.name, proc)
    this.log.info(
      { container: rec.name, pid: proc.pid, argv: prep.argv, restartCount: rec.restartCount },
      'container started',
    )
    this.requestStatus()

    const exit = await proc.exited
    this.processes.delete(rec.name)
    const oomKilled = exit.exitCode === 137 && (cgroup?.oomKilled() ?? false)
    if (cgroup) setTimeout(() => cgroup.remove(), 1000).unref()
    const message = exit.spawnError
      ? exit.spawnError
      : await readTerminationMessage({
          messageFile: prep.messageFile,
          logFile: prep.logFile,
          policy: prep.messagePolicy,
          exitCode: exit.exitCode,
        })
    rec.state = {
      kind: 'terminated',
      exitCode: exit.exitCode,
      ...(exit.signal ? { signal: exit.signal } : {}),
      reason: exit.spawnError ? 'StartError' : oomKilled ? 'OOMKilled' : exit.exitCode === 0 ? 'Completed' : 'Error',
      ...(message ? { message } : {}),
      startedAt,
      finishedAt: new Date(),
      containerId,
    }
    this.log.info({ container: rec.name, exitCode: exit.exitCode, signal: exit.signal, oomKilled }, 'container exited')
    this.requestStatus()
    return exit.exitCode
  }

  /** The container's memory cgroup with its limit, the process moved in; undefined without a limit or a controller. */
  private limitMemory(
    rec: ContainerRecord,
    prep: PreparedContainer,
    pid: number | undefined,
  ): MemoryCgroup | undefined {
    if (!prep.memoryLimitBytes || !this.ctx.memoryLimits || !pid) return undefined
    try {
      const cgroup = this.ctx.memoryLimits.create(`${this.uid}-${rec.name}-${rec.restartCount}`, prep.memoryLimitBytes)
      cgroup.add(pid)
      return cgroup
    } catch (err) {
      this.log.warn({ container: rec.name, err: errorMessage(err) }, 'memory limit not applied')
      return undefined
    }
  }

  // ---- termination ----

  private beginTermination(cause: TerminationCause, graceSeconds: number): void {
    const killAt = Date.now() + Math.max(0, graceSeconds) * 1000
    if (this.termination) {
      if (killAt < this.termination.killAt) {
        // A shorter grace period (e.g. a second delete) wins, as in kubelet.
        this.termination.killAt = killAt
        this.scheduleKill()
      }
      return
    }
    this.termination = { cause, killAt }
    this.restarts.abort()
    clearTimeout(this.deadlineTimer)
    if (this.processes.size > 0 || this.stage === 'running') {
      this.log.info({ cause, graceSeconds, running: [...this.processes.keys()] }, 'terminating pod')
    }
    for (const proc of this.processes.values()) proc.signal('SIGTERM')
    this.scheduleKill()
  }

  private scheduleKill(): void {
    const t = this.termination
    if (!t) return
    clearTimeout(t.killTimer)
    t.killTimer = setTimeout(
      () => {
        if (this.processes.size > 0)
          this.log.info({ running: [...this.processes.keys()] }, 'grace period over, killing')
        for (const proc of this.processes.values()) proc.signal('SIGKILL')
      },
      Math.max(0, t.killAt - Date.now()),
    )
  }

  /** Every process is gone (or never started): decide the phase and report it. */
  private finish(cause?: TerminationCause): void {
    clearTimeout(this.termination?.killTimer)
    clearTimeout(this.deadlineTimer)
    clearTimeout(this.retryTimer)
    this.retryTimer = undefined
    this.stage = 'finished'
    const why = this.termination?.cause ?? cause
    if (this.closed || why === 'shutdown' || why === 'gone') return
    const now = new Date()
    terminateUnstarted(this.rec, now)
    if (why === 'deadline') {
      this.rec.phase = 'Failed'
      this.rec.reason = 'DeadlineExceeded'
      this.rec.message = DEADLINE_MESSAGE
    } else if (why === 'external' && isTerminalPhase(this.pod.status?.phase)) {
      this.rec.phase = this.pod.status.phase
    } else {
      this.rec.phase = finalPhase(this.rec)
    }
    this.log.info({ phase: this.rec.phase, reason: this.rec.reason, cause: why ?? 'exited' }, 'pod finished')
    this.requestStatus()
  }

  private issueFinalDelete(): void {
    this.finalDelete = 'inflight'
    withRetry('final pod delete', () => this.ctx.api.finalDelete(this.namespace, this.name, this.uid), {
      log: this.log,
      signal: this.lifetime.signal,
    }).then(
      () => {
        this.finalDelete = 'done'
        this.log.info('final delete issued')
      },
      (err: unknown) => {
        this.finalDelete = 'none'
        if (err instanceof AbortedError) return
        this.log.error({ err: errorMessage(err) }, 'final delete failed, will retry')
        setTimeout(() => this.reconcile(), STATUS_RETRY_MS)
      },
    )
  }

  // ---- status ----

  private requestStatus(): void {
    if (this.closed) return
    this.statusDirty = true
    if (this.statusLoop) return
    this.statusLoop = (async () => {
      // Let the transitions of this turn of the event loop settle into one write.
      await new Promise((resolve) => setImmediate(resolve))
      while (this.statusDirty && !this.closed) {
        this.statusDirty = false
        await this.writeStatus()
      }
    })()
      .catch((err: unknown) => {
        if (err instanceof AbortedError) return
        this.log.error({ err: errorMessage(err) }, 'pod status write failed, will retry')
        setTimeout(() => this.requestStatus(), STATUS_RETRY_MS)
      })
      .finally(() => {
        this.statusLoop = undefined
      })
  }

  /** Re-reads the pod and writes the status rebuilt from the record; retried on conflict and transient errors. */
  private async writeStatus(): Promise<void> {
    const written = await withRetry(
      'write pod status',
      async () => {
        const current = await this.ctx.api.readPod(this.namespace, this.name)
        if (!current || current.metadata?.uid !== this.uid) return undefined
        const status = buildPodStatus(this.rec, current, new Date())
        const json = JSON.stringify(status)
        if (json === this.lastWritten) return status // nothing new since our last write
        try {
          await this.ctx.api.patchPodStatus(this.namespace, this.name, current.metadata?.resourceVersion ?? '', status)
        } catch (err) {
          if (isNotFound(err)) return undefined
          throw err
        }
        this.lastWritten = json
        return status
      },
      { log: this.log, signal: this.lifetime.signal, maxDelayMs: 10_000, permanentAttempts: 5 },
    )
    if (!written) return // pod gone: the watch reports the deletion
    this.log.debug({ phase: written.phase }, 'pod status written')
    if (isTerminalPhase(written.phase) && this.stage === 'finished' && !this.terminalWritten) {
      this.terminalWritten = true
      this.reconcile()
    }
  }
}
