import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { until } from '../platform/wait-for.js'

type Kubectl = (args: string[]) => string

const ATTEMPT_MS = 5000

export interface ServiceProbe {
  /** The Service's URL as this host reaches it (its ClusterIP, through kube-proxy's rules). */
  url: string
  namespace: string
  service: string
  /** A path that answers 200 when the pods behind the Service are ready. */
  path: string
  kubectl: Kubectl
  /** The platform's state dir: its logs/kube-proxy.log is quoted when the Service does not answer. */
  platformDir: string
  timeoutMs: number
  /** Told the last answer every 20 s while there is none (the log shows a slow Service). */
  progress?: (message: string) => void
}

/**
 * Waits until `url + path` answers 200 through the Service. Each attempt has its own deadline, so
 * one attempt that hangs cannot use up the wait. When it never answers, the error says why in its
 * own message (CI keeps only the end of the output): the last answer or connection error, the
 * Service's endpoints and their readiness, what each endpoint answers when asked directly, whether
 * kube-proxy has written a rule for the ClusterIP, and the end of kube-proxy's log.
 */
export async function waitForServiceAnswer(p: ServiceProbe): Promise<void> {
  let last = 'no attempt finished'
  let nextReport = Date.now() + 20_000
  const answered = async () => {
    last = await attempt(`${p.url}${p.path}`)
    if (last !== 'HTTP 200' && Date.now() > nextReport) {
      p.progress?.(`${p.service} not answering through its Service yet (${last})`)
      nextReport += 20_000
    }
    return last === 'HTTP 200'
  }
  try {
    await until(`${p.service} through its Service`, answered, p.timeoutMs, 250)
  } catch {
    throw new Error(
      `service ${p.namespace}/${p.service} (${p.url}) did not answer ${p.path} with 200 within ${p.timeoutMs / 1000} s; ${await diagnose(p, last)}`,
    )
  }
}

/** One GET: `HTTP <status>` (with the body's start when not 200), or the connection error's code. */
async function attempt(url: string): Promise<string> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(ATTEMPT_MS) })
    const body = await res.text()
    return res.status === 200 ? 'HTTP 200' : `HTTP ${res.status} ${body.slice(0, 160)}`
  } catch (err) {
    return errorCode(err)
  }
}

function errorCode(err: unknown): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string; message?: string } }
  return (
    e.cause?.code ??
    e.code ??
    (e.name === 'TimeoutError' ? `no answer within ${ATTEMPT_MS / 1000} s` : (e.cause?.message ?? String(err)))
  )
}

async function diagnose(p: ServiceProbe, last: string): Promise<string> {
  const parts = [`last attempt: ${last}`]
  const clusterIp = new URL(p.url).hostname
  try {
    const slices = JSON.parse(
      p.kubectl([
        '-n',
        p.namespace,
        'get',
        'endpointslices',
        '-l',
        `kubernetes.io/service-name=${p.service}`,
        '-o',
        'json',
      ]),
    ) as {
      items: { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[]; ports?: { port?: number }[] }[]
    }
    const endpoints = slices.items.flatMap((s) =>
      (s.endpoints ?? []).map((e) => ({
        address: e.addresses[0],
        ready: e.conditions?.ready === true,
        port: s.ports?.[0]?.port,
      })),
    )
    if (endpoints.length === 0) parts.push('endpoints: none')
    for (const e of endpoints)
      parts.push(
        `endpoint ${e.address}:${e.port} ready=${e.ready} answers directly: ${await attempt(`http://${e.address}:${e.port}${p.path}`)}`,
      )
  } catch (err) {
    parts.push(`endpoints: unreadable (${errorCode(err)})`)
  }
  try {
    const rules = execFileSync('iptables-save', ['-t', 'nat'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(`${clusterIp}/32`))
    parts.push(`kube-proxy's nat rules for ${clusterIp}: ${rules.length}`)
  } catch (err) {
    parts.push(`iptables-save failed (${errorCode(err)})`)
  }
  const log = join(p.platformDir, 'logs', 'kube-proxy.log')
  if (existsSync(log)) {
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n')
    // Warnings, errors, and its "Sync failed" (logged as info: it retries after iptables.syncPeriod).
    const notable = lines.filter((l) => /^[EW]\d{4}/.test(l) || l.includes('"Sync failed"')).slice(-3)
    parts.push(
      `kube-proxy.log: ${lines.length} lines, last warnings, errors or failed syncs: ${notable.length ? notable.join(' | ') : 'none'}`,
    )
  }
  return parts.join('; ')
}
