import { Worker } from 'node:worker_threads'

/**
 * One worker thread kept between jobs of a process: a pool pod's next job (of the same tenant)
 * skips starting a thread and loading its libraries again. Only a worker that ended its work as it
 * meant to (a result, or a classified refusal) is kept; any other is terminated by its user.
 * Unreferenced while it waits, so it never keeps a job-mode runner alive.
 */
export class KeptWorker {
  private idle: { worker: Worker; key: string } | undefined

  /** The kept worker's thread id, if one is kept. */
  get threadId(): number | null {
    return this.idle?.worker.threadId ?? null
  }

  /** The kept worker when it runs `url` with `heapMb`, else a new one (the kept one ends). */
  take(url: URL, heapMb: number): Worker {
    const key = `${heapMb} ${url.href}`
    let worker: Worker
    if (this.idle?.key === key) worker = this.idle.worker
    else {
      void this.idle?.worker.terminate()
      worker = new Worker(url, { resourceLimits: { maxOldGenerationSizeMb: heapMb } })
    }
    this.idle = undefined
    worker.ref()
    return worker
  }

  /** Keeps a worker taken for `url` and `heapMb` for the next take. */
  keep(worker: Worker, url: URL, heapMb: number): void {
    worker.unref()
    if (this.idle?.worker !== worker) void this.idle?.worker.terminate()
    this.idle = { worker, key: `${heapMb} ${url.href}` }
  }
}
