import { Worker } from 'node:worker_threads'

/**
 * One worker thread kept between jobs of a process: a pool pod's next job (of the same tenant)
 * skips starting a thread and loading its libraries again. Only a worker that ended its work as it
 * meant to (a result, or a classified refusal) is kept; any other is terminated by its user.
 * Unreferenced while it waits, so it never keeps a job-mode runner alive.
 */
/** A worker taken for one job, with the job's listeners on it. */
export interface WorkerLease {
  worker: Worker
  /**
   * The job is over: its listeners come off, and a worker that ended it cleanly is kept for
   * the next job; any other is terminated. Later calls do nothing.
   */
  end(clean: boolean): Promise<void>
}

/** The job's listeners; `M` is what its worker program posts. */
export interface WorkerListeners<M> {
  message(m: M): void
  error(err: unknown): void
  exit(code: number): void
}

export class KeptWorker {
  private idle: { worker: Worker; key: string } | undefined

  /** The kept worker's thread id, if one is kept. */
  get threadId(): number | null {
    return this.idle?.worker.threadId ?? null
  }

  /** The kept worker when it runs `url` with `heapMb`, else a new one (the kept one ends). */
  private take(url: URL, heapMb: number): Worker {
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

  /** Takes a worker for one job (see {@link take}) with the job's listeners until it ends. */
  lease<M>(url: URL, heapMb: number, on: WorkerListeners<M>): WorkerLease {
    const worker = this.take(url, heapMb)
    // What the worker program posts is its own protocol's message type (ToMain).
    const onMessage = (m: unknown) => on.message(m as M)
    worker.on('message', onMessage)
    worker.on('error', on.error)
    worker.on('exit', on.exit)
    let ended = false
    const end = async (clean: boolean) => {
      if (ended) return
      ended = true
      worker.off('message', onMessage)
      worker.off('error', on.error)
      worker.off('exit', on.exit)
      if (clean) this.keep(worker, url, heapMb)
      else await worker.terminate()
    }
    return { worker, end }
  }

  /** Keeps a worker taken for `url` and `heapMb` for the next take. */
  private keep(worker: Worker, url: URL, heapMb: number): void {
    worker.unref()
    if (this.idle?.worker !== worker) void this.idle?.worker.terminate()
    this.idle = { worker, key: `${heapMb} ${url.href}` }
  }
}
