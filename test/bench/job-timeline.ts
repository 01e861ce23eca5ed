/**
 * Where one job's time goes on a real node, from what each party wrote down in milliseconds or
 * better: the job's own times (accepted, succeeded), the operator's log lines, containerd's log
 * (the kubelet's sandbox and container calls, in nanoseconds) and the runner's result manifest.
 * Pure: the bench reads the files and hands their text here.
 */

export interface ContainerdTimes {
  /** The kubelet asked for the pod's sandbox. */
  sandboxAsked?: number
  sandboxReady?: number
  /** The runner container was created and started (runc). */
  containerStarted?: number
}

const CONTAINERD_TIME = /^time="([^"]+)"/

/** The kubelet's sandbox and runner-container calls for each pod, by pod name. */
export function containerdTimes(log: string, container = 'runner'): Map<string, ContainerdTimes> {
  const byPod = new Map<string, ContainerdTimes>()
  const podOfSandbox = new Map<string, string>()
  const podOfContainer = new Map<string, string>()
  const at = (pod: string) => byPod.get(pod) ?? byPod.set(pod, {}).get(pod)!
  for (const line of log.split('\n')) {
    const time = CONTAINERD_TIME.exec(line)
    if (!time) continue
    const t = Date.parse(time[1])
    let m = /RunPodSandbox for &PodSandboxMetadata\{Name:([^,]+),.*?returns sandbox id \\"([0-9a-f]+)\\"/.exec(line)
    if (m) {
      at(m[1]).sandboxReady = t
      podOfSandbox.set(m[2], m[1])
      continue
    }
    m = /RunPodSandbox for &PodSandboxMetadata\{Name:([^,]+),/.exec(line)
    if (m) {
      at(m[1]).sandboxAsked ??= t
      continue
    }
    m = new RegExp(
      `CreateContainer within sandbox \\\\"([0-9a-f]+)\\\\" for &ContainerMetadata\\{Name:${container},.*returns container id \\\\"([0-9a-f]+)\\\\"`,
    ).exec(line)
    if (m) {
      const pod = podOfSandbox.get(m[1])
      if (pod) podOfContainer.set(m[2], pod)
      continue
    }
    m = /StartContainer for \\"([0-9a-f]+)\\" returns successfully/.exec(line)
    if (m) {
      const pod = podOfContainer.get(m[1])
      if (pod) at(pod).containerStarted = t
    }
  }
  return byPod
}

interface LogEntry {
  time?: number | string
  msg?: string
  jobId?: string
  [field: string]: unknown
}

/** The JSON log lines of a pino log, each behind any prefix kubectl put before it. */
function* entries(log: string): Generator<LogEntry> {
  for (const line of log.split('\n')) {
    const start = line.indexOf('{')
    if (start < 0) continue
    try {
      yield JSON.parse(line.slice(start)) as LogEntry
    } catch {
      // not a log line of the program's own
    }
  }
}

/** A numeric field of the operator's first line with `msg` for each job (e.g. credentialsMs). */
export function operatorField(log: string, msg: string, field: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const entry of entries(log)) {
    const value = entry[field]
    if (entry.msg === msg && entry.jobId && typeof value === 'number' && !out.has(entry.jobId))
      out.set(entry.jobId, value)
  }
  return out
}

/** The first time (ms) the operator logged each message for each job, from its JSON log lines. */
export function operatorTimes(log: string, messages: readonly string[]): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>()
  for (const entry of entries(log)) {
    if (!entry.jobId || !entry.msg || !messages.includes(entry.msg) || entry.time === undefined) continue
    const t = typeof entry.time === 'number' ? entry.time : Date.parse(entry.time)
    const times = out.get(entry.jobId) ?? {}
    times[entry.msg] ??= t
    out.set(entry.jobId, times)
  }
  return out
}

export interface JobMarks {
  accepted: number
  batchJobCreated?: number
  sandboxAsked?: number
  sandboxReady?: number
  containerStarted?: number
  runnerStarted: number
  runnerDone: number
  resultRead?: number
  succeeded: number
}

export const STAGES: ReadonlyArray<[string, keyof JobMarks, keyof JobMarks]> = [
  [
    'accepted → batch Job created (operator: watch, admission, storage credentials, create)',
    'accepted',
    'batchJobCreated',
  ],
  ['→ the kubelet asks for the sandbox (Job controller, scheduler, kubelet)', 'batchJobCreated', 'sandboxAsked'],
  ['→ sandbox ready (network namespace, CNI)', 'sandboxAsked', 'sandboxReady'],
  ['→ runner container started (create, runc)', 'sandboxReady', 'containerStarted'],
  ["→ the runner's program starts (Node start-up)", 'containerStarted', 'runnerStarted'],
  ['→ outputs and manifest stored (download, work, uploads)', 'runnerStarted', 'runnerDone'],
  ['→ the operator reads the manifest', 'runnerDone', 'resultRead'],
  ['→ status succeeded written', 'resultRead', 'succeeded'],
]

/** Each stage's duration for each job (ms), where both its marks are known. */
export function stageDurations(jobs: readonly JobMarks[]): Array<[string, number[]]> {
  return STAGES.map(([name, from, to]) => [
    name,
    jobs.flatMap((j) => (j[from] !== undefined && j[to] !== undefined ? [j[to]! - j[from]!] : [])),
  ])
}
