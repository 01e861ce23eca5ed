import { readFileSync } from 'node:fs'
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type V1Job, type V1Pod } from '@kubernetes/client-node'
import pino from 'pino'
import { inject } from 'vitest'
import { API_GROUP, API_VERSION, LABELS, UTILITY_JOB } from '../../contract/api-group.js'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { objectNameOf } from '../../contract/ids.js'
import { watchEvents, type EventWatch } from '../../platform/kube.js'
import { CallbackReceiver } from '../support/callback-receiver.js'
import { FileServer } from '../support/file-server.js'
import { makeHeavyPdf, makePdf } from '../support/pdfs.js'
import { fileEntry, writeZip } from '../support/zip-writer.js'
import { createKey, kubeConfig } from '../integration/helpers/keys.js'

/**
 * A burst of jobs as clients send them, with a fault striking while it is in flight, and what
 * the clients and the cluster saw afterwards: every accepted job reaches exactly one terminal
 * state, at most one batch Job was ever made for it, its outputs are all there, and each
 * callback reached the receiver (one webhook-id per job, however many deliveries).
 */

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled'])

export interface BurstFixtures {
  files: FileServer
  receiver: CallbackReceiver
  stop(): Promise<void>
}

export async function burstFixtures(): Promise<BurstFixtures> {
  const files = await new FileServer().start()
  files.add('two.pdf', await makePdf(2))
  // Surely past a 32Mi runner limit however lean the runner gets: 8 MB held as input, more parsed.
  files.add('heavy.pdf', await makeHeavyPdf(28, 300_000))
  files.add('a.txt', Buffer.from('first file\n'), 'text/plain')
  files.add('b.txt', Buffer.from('second file\n'), 'text/plain')
  files.add(
    'pair.zip',
    writeZip([fileEntry('one.txt', Buffer.from('one\n')), fileEntry('two.txt', Buffer.from('two\n'))]),
    'application/zip',
  )
  const tls = inject('callbackTls')
  const receiver = await new CallbackReceiver({
    cert: readFileSync(tls.certFile),
    key: readFileSync(tls.keyFile),
  }).start()
  return {
    files,
    receiver,
    stop: async () => {
      await files.stop()
      await receiver.stop()
    },
  }
}

/**
 * What the cluster showed while the burst ran: each job's terminal states, each batch Job and
 * runner pod made for it. Batch Jobs and pods carry the UtilityJob's name in their job-id label:
 * read them by public job id with the accessors.
 */
export class ClusterObserver {
  readonly terminalStates = new Map<string, Set<string>>()
  private readonly batchJobsByName = new Map<string, Set<string>>()
  private readonly podsByName = new Map<string, Set<string>>()
  private readonly startedNames = new Set<string>()
  private readonly batchJobCreated = new Map<string, number>()

  /** When the API server created a job's (first) batch Job; undefined when none was seen. */
  batchJobCreatedAt(jobName: string): number | undefined {
    return this.batchJobCreated.get(jobName)
  }

  /** Batch Jobs ever seen for a job (by uid). */
  batchJobs(jobId: string): number {
    return this.batchJobsByName.get(objectNameOf(jobId))?.size ?? 0
  }

  /** Runner pods ever seen for a job (by uid). */
  pods(jobId: string): number {
    return this.podsByName.get(objectNameOf(jobId))?.size ?? 0
  }

  /** Whether a runner container of the job ever started. */
  started(jobId: string): boolean {
    return this.startedNames.has(objectNameOf(jobId))
  }
  private readonly watches: EventWatch[] = []

  async start(): Promise<this> {
    const kc = kubeConfig()
    const custom = kc.makeApiClient(CustomObjectsApi)
    const batch = kc.makeApiClient(BatchV1Api)
    const core = kc.makeApiClient(CoreV1Api)
    const log = pino({ level: 'silent' })
    const ns = 'dutil'
    const seeJob = (uj: UtilityJobResource) => {
      const state = uj.status?.state
      if (!state || !TERMINAL.has(state)) return
      const set = this.terminalStates.get(uj.spec.jobId) ?? new Set()
      set.add(state)
      this.terminalStates.set(uj.spec.jobId, set)
    }
    const seeBatchJob = (job: V1Job) => {
      const id = job.metadata?.labels?.[LABELS.jobId]
      if (!id || !job.metadata?.uid) return
      const set = this.batchJobsByName.get(id) ?? new Set()
      if (!this.batchJobCreated.has(id) && job.metadata.creationTimestamp)
        this.batchJobCreated.set(id, new Date(job.metadata.creationTimestamp).getTime())
      set.add(job.metadata.uid)
      this.batchJobsByName.set(id, set)
    }
    const seePod = (pod: V1Pod) => {
      const id = pod.metadata?.labels?.[LABELS.jobId]
      if (!id || !pod.metadata?.uid) return
      const set = this.podsByName.get(id) ?? new Set()
      set.add(pod.metadata.uid)
      this.podsByName.set(id, set)
      // A container that never ran is reported terminated on deletion, but without a start time.
      if (pod.status?.containerStatuses?.some((c) => c.state?.running || c.state?.terminated?.startedAt))
        this.startedNames.add(id)
    }
    const listPods = () => core.listNamespacedPod({ namespace: ns })
    const listJobs = () => batch.listNamespacedJob({ namespace: ns })
    const listUtilityJobs = () =>
      custom.listNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: ns,
        plural: UTILITY_JOB.plural,
      }) as Promise<{ items: UtilityJobResource[] }>
    // A resync lists everything (events in between may be missing); otherwise only events count.
    this.watches.push(
      watchEvents<UtilityJobResource>(
        kc,
        `/apis/${API_GROUP}/${API_VERSION}/namespaces/${ns}/${UTILITY_JOB.plural}`,
        listUtilityJobs as never,
        log,
        {
          onEvent: (_e, uj) => seeJob(uj),
          onResync: () =>
            void listUtilityJobs().then(
              (l) => l.items.forEach(seeJob),
              () => {},
            ),
        },
      ),
      watchEvents<V1Job>(kc, `/apis/batch/v1/namespaces/${ns}/jobs`, listJobs as never, log, {
        onEvent: (_e, job) => seeBatchJob(job),
        onResync: () =>
          void listJobs().then(
            (l) => l.items.forEach(seeBatchJob),
            () => {},
          ),
      }),
      watchEvents<V1Pod>(kc, `/api/v1/namespaces/${ns}/pods`, listPods as never, log, {
        onEvent: (_e, pod) => seePod(pod),
        onResync: () =>
          void listPods().then(
            (l) => l.items.forEach(seePod),
            () => {},
          ),
      }),
    )
    await Promise.all(this.watches.map((w) => w.synced))
    return this
  }

  async stop(): Promise<void> {
    await Promise.all(this.watches.map((w) => w.stop()))
  }
}

export interface Submitted {
  /** Job id per request index (the id the last successful answer gave). */
  ids: Map<number, string>
  /** Requests whose retries were answered with two different job ids. */
  duplicates: number
  /** Requests never accepted before the client gave up. */
  refused: number
  /** Requests that needed more than one try. */
  retried: number
  /** Answers seen while retrying, by status (0: no connection). */
  answers: Map<number, number>
  callbackPaths: Map<string, string>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Sends `count` async jobs (split-pdf, zip-files, unzip-files in turn; every `callbackEvery`-th with
 * a callback), `concurrency` at a time, each with its own Idempotency-Key, retrying as a careful
 * client does: on no connection, 5xx and 429 (after Retry-After), for up to `giveUpMs`.
 * `onAccepted(n)` is called after each first acceptance (the fault strikes from there).
 */
export async function submitBurst(o: {
  name: string
  key: string
  fixtures: BurstFixtures
  count: number
  concurrency?: number
  callbackEvery?: number
  giveUpMs?: number
  onAccepted?: (n: number) => void
}): Promise<Submitted> {
  const { files, receiver } = o.fixtures
  const out: Submitted = {
    ids: new Map(),
    duplicates: 0,
    refused: 0,
    retried: 0,
    answers: new Map(),
    callbackPaths: new Map(),
  }
  let next = 0
  let accepted = 0
  const bodyFor = (i: number) => {
    const kind = i % 3
    const input =
      kind === 0
        ? { url: `${files.url}/files/two.pdf` }
        : kind === 1
          ? {
              files: [
                { url: `${files.url}/files/a.txt`, fileName: 'a.txt' },
                { url: `${files.url}/files/b.txt`, fileName: 'b.txt' },
              ],
            }
          : { url: `${files.url}/files/pair.zip` }
    const utility = ['split-pdf', 'zip-files', 'unzip-files'][kind]
    const path = `/${o.name}/${i}`
    const callbackUrl = i % (o.callbackEvery ?? 4) === 0 ? receiver.url(path) : undefined
    return {
      utility,
      body: { input, ...(callbackUrl ? { callbackUrl } : {}), metadata: { burst: o.name, index: i } },
      path: callbackUrl ? path : undefined,
    }
  }
  const one = async (i: number) => {
    const { utility, body, path } = bodyFor(i)
    const deadline = Date.now() + (o.giveUpMs ?? 180_000)
    for (let attempt = 0; ; attempt++) {
      if (attempt === 1) out.retried++
      let status = 0
      let retryAfterMs = 500
      try {
        const res = await fetch(`${inject('gatewayUrl')}/v1/utilities/${utility}/jobs`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${o.key}`,
            'Content-Type': 'application/json',
            'Idempotency-Key': `${o.name}-${i}`,
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        })
        status = res.status
        const answer = (await res.json().catch(() => ({}))) as { id?: string }
        if (status === 200 || status === 202) {
          const earlier = out.ids.get(i)
          if (earlier && earlier !== answer.id) out.duplicates++
          out.ids.set(i, answer.id!)
          if (path) out.callbackPaths.set(answer.id!, path)
          if (!earlier) o.onAccepted?.(++accepted)
          return
        }
        if (status === 429) retryAfterMs = Number(res.headers.get('retry-after') ?? 1) * 1000
        else if (status < 500) throw new Error(`request ${i} refused with ${status}: ${JSON.stringify(answer)}`)
      } catch (err) {
        if ((err as Error).message.startsWith(`request ${i} refused`)) throw err
      }
      out.answers.set(status, (out.answers.get(status) ?? 0) + 1)
      if (Date.now() > deadline) {
        out.refused++
        return
      }
      await sleep(Math.min(retryAfterMs, 2000))
    }
  }
  await Promise.all(
    Array.from({ length: o.concurrency ?? 16 }, async () => {
      while (next < o.count) await one(next++)
    }),
  )
  return out
}

export interface JobOutcome {
  id: string
  state: string
  errorCode?: string
}

/** Pages through GET /v1/jobs of the key until every id is terminal (or `timeoutMs` passes). */
export async function awaitTerminal(key: string, ids: string[], timeoutMs = 240_000): Promise<Map<string, JobOutcome>> {
  const deadline = Date.now() + timeoutMs
  const want = new Set(ids)
  for (;;) {
    const seen = new Map<string, JobOutcome>()
    let cursor: string | null = null
    do {
      const res = await fetch(
        `${inject('gatewayUrl')}/v1/jobs?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { headers: { Authorization: `Bearer ${key}` } },
      ).catch(() => null)
      if (!res || res.status !== 200) {
        cursor = null
        break
      }
      const page = (await res.json()) as {
        items: Array<{ id: string; status: string; errorCode: string | null }>
        nextCursor: string | null
      }
      for (const j of page.items)
        if (want.has(j.id)) seen.set(j.id, { id: j.id, state: j.status, errorCode: j.errorCode ?? undefined })
      cursor = page.nextCursor
    } while (cursor)
    const open = ids.filter((id) => !TERMINAL.has(seen.get(id)?.state ?? ''))
    if (open.length === 0) return seen
    if (Date.now() > deadline)
      throw new Error(
        `${open.length} of ${ids.length} jobs not terminal after ${timeoutMs} ms (e.g. ${open.slice(0, 3).join(', ')}: ${open
          .slice(0, 3)
          .map((id) => seen.get(id)?.state ?? 'not listed')
          .join(', ')})`,
      )
    await sleep(1000)
  }
}

/** For each succeeded job: its result files, each downloaded through the link the API gives. */
export async function missingOutputs(key: string, succeeded: string[]): Promise<string[]> {
  const missing: string[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < succeeded.length) {
        const id = succeeded[next++]
        const res = await fetch(`${inject('gatewayUrl')}/v1/jobs/${id}`, {
          headers: { Authorization: `Bearer ${key}` },
        })
        const job = (await res.json()) as {
          result?: { files?: Array<{ name: string; url: string; size: number | null }> }
        }
        const files = job.result?.files ?? []
        if (files.length === 0) missing.push(`${id}: no files`)
        for (const f of files) {
          const got = await fetch(f.url)
          const bytes = Buffer.from(await got.arrayBuffer())
          if (got.status !== 200 || (f.size !== null && bytes.length !== f.size))
            missing.push(`${id}/${f.name}: ${got.status}, ${bytes.length} bytes`)
        }
      }
    }),
  )
  return missing
}

export interface FaultReport {
  scenario: string
  requests: number
  accepted: number
  retried: number
  terminal: number
  byOutcome: Record<string, number>
  duplicates: number
  lost: number
  extraBatchJobs: number
  callbacks: { expected: number; received: number; duplicateDeliveries: number }
}

/** Waits for the callbacks (each job's one event, deduplicated by webhook-id) and counts them. */
export async function callbackCounts(receiver: CallbackReceiver, paths: Map<string, string>, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs
  const count = () => {
    let received = 0
    let deliveries = 0
    const eventsPerJob = new Map<string, number>()
    for (const [id, path] of paths) {
      const got = receiver.requests(path)
      deliveries += got.length
      const ids = new Set(got.map((r) => r.headers['webhook-id']))
      eventsPerJob.set(id, ids.size)
      if (ids.size > 0) received++
    }
    return { received, deliveries, eventsPerJob }
  }
  let c = count()
  while (c.received < paths.size && Date.now() < deadline) {
    await sleep(500)
    c = count()
  }
  return c
}

export const newBurstKey = (name: string) => createKey({ name: `faults-${name}`, rateLimitPerMinute: 100_000 })
