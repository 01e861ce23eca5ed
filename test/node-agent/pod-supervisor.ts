// Watches the pods bound to this node (list+watch with re-list) and keeps one PodWorker per pod
// uid. Watch events only trigger level-based reconciliation; a periodic resync against the cache
// catches anything missed. Also removes scratch directories of pods that no longer exist.
import fs from 'node:fs/promises'
import path from 'node:path'
import { type CoreV1Api, type KubeConfig, ListWatch, type V1Pod, Watch } from '@kubernetes/client-node'
import { errorMessage } from './kube-errors.js'
import type { Logger } from './logger.js'
import { PodWorker, type WorkerContext } from './pod-worker.js'
import { backoffDelay } from './retry.js'

export const RESYNC_INTERVAL_MS = 30_000
const UID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export class PodSupervisor {
  private readonly workers = new Map<string, PodWorker>()
  private informer?: ListWatch<V1Pod>
  private resyncTimer?: NodeJS.Timeout
  private restartTimer?: NodeJS.Timeout
  private watchFailures = 0
  private listed = false
  private stopped = false

  constructor(
    private readonly kc: KubeConfig,
    private readonly core: CoreV1Api,
    private readonly nodeName: string,
    private readonly ctx: WorkerContext,
  ) {}

  private get log(): Logger {
    return this.ctx.log
  }

  async start(): Promise<void> {
    const fieldSelector = `spec.nodeName=${this.nodeName}`
    const listFn = async () => {
      const list = await this.core.listPodForAllNamespaces({ fieldSelector })
      this.watchFailures = 0
      if (!this.listed) {
        this.listed = true
        const uids = new Set(list.items.map((p) => p.metadata?.uid ?? ''))
        void this.sweepWorkDir(uids)
      }
      return list
    }
    // makeInformer in 1.4.0 takes no field selector; ListWatch does.
    const informer = new ListWatch<V1Pod>('/api/v1/pods', new Watch(this.kc), listFn, false, undefined, fieldSelector)
    this.informer = informer
    informer.on('add', (pod) => this.observe(pod))
    informer.on('update', (pod) => this.observe(pod))
    informer.on('delete', (pod) => this.forget(pod.metadata?.uid))
    informer.on('error', (err) => this.onWatchError(err))
    await informer.start()
    this.resyncTimer = setInterval(() => this.resync(), RESYNC_INTERVAL_MS)
  }

  /** Stops watching and kills every pod process (SIGTERM, then SIGKILL after `graceSeconds`). */
  async stop(graceSeconds: number): Promise<void> {
    this.stopped = true
    clearInterval(this.resyncTimer)
    clearTimeout(this.restartTimer)
    await this.informer?.stop()
    await Promise.all([...this.workers.values()].map((w) => w.shutdown(graceSeconds)))
  }

  /** SIGKILLs every pod process now (second signal, or shutdown taking too long). */
  killAll(): void {
    for (const w of this.workers.values()) w.killNow()
  }

  private onWatchError(err: unknown): void {
    if (this.stopped) return
    this.watchFailures++
    const delayMs = backoffDelay(this.watchFailures, 500, 10_000)
    this.log.warn({ err: errorMessage(err), delayMs }, 'pod watch failed, restarting')
    clearTimeout(this.restartTimer)
    this.restartTimer = setTimeout(() => {
      if (!this.stopped) void this.informer?.start()
    }, delayMs)
  }

  private observe(pod: V1Pod): void {
    const uid = pod.metadata?.uid
    if (!uid || this.stopped) return
    try {
      // Same name, new uid: the pod we knew was deleted and replaced while we were not looking.
      for (const w of this.workers.values()) {
        if (w.uid !== uid && w.namespace === pod.metadata?.namespace && w.name === pod.metadata?.name)
          this.forget(w.uid)
      }
      let worker = this.workers.get(uid)
      if (!worker) {
        worker = new PodWorker(this.ctx, pod)
        this.workers.set(uid, worker)
        this.log.info(
          { pod: `${worker.namespace}/${worker.name}`, uid, phase: pod.status?.phase },
          'pod bound to node observed',
        )
      }
      worker.update(pod)
    } catch (err) {
      this.log.error({ err, uid }, 'pod handling failed')
    }
  }

  private forget(uid: string | undefined): void {
    const worker = uid ? this.workers.get(uid) : undefined
    if (!worker) return
    this.workers.delete(worker.uid)
    worker.gone().catch((err: unknown) => this.log.error({ err, uid }, 'pod cleanup failed'))
  }

  private resync(): void {
    if (!this.informer || !this.listed) return
    const current = this.informer.list()
    const uids = new Set(current.map((p) => p.metadata?.uid))
    for (const pod of current) this.observe(pod)
    for (const uid of [...this.workers.keys()]) if (!uids.has(uid)) this.forget(uid)
  }

  /** Removes `<work-dir>/<uid>` directories of pods that no longer exist (left by an earlier run). */
  private async sweepWorkDir(live: Set<string>): Promise<void> {
    let entries: string[]
    try {
      entries = await fs.readdir(this.ctx.workDir)
    } catch {
      return
    }
    for (const name of entries) {
      if (!UID_PATTERN.test(name) || live.has(name) || this.workers.has(name)) continue
      await fs.rm(path.join(this.ctx.workDir, name), { recursive: true, force: true }).catch(() => undefined)
      this.log.info({ uid: name }, 'removed scratch directory of a pod that no longer exists')
    }
  }
}
