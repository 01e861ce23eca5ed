import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node'
import { PDFDocument } from 'pdf-lib'
import { inject } from 'vitest'
import { LABELS } from '../../contract/api-group.js'
import { objectNameOf } from '../../contract/ids.js'
import { kubeConfig } from '../integration/helpers/keys.js'
import { BIN_DIR } from '../platform/platform.js'
import { until } from '../platform/wait-for.js'
import { CHART, NS, RELEASE } from './chart-values.js'

/**
 * kubectl against the real-node platform, as an admin would run it. Its output may be large (a
 * kubelet's /metrics, an operator's whole log): up to 256 MB is read.
 */
export function kubectl(args: string[], input?: string): string {
  return execFileSync(join(BIN_DIR, 'kubectl'), ['--kubeconfig', inject('kubeconfigPath'), ...args], {
    input,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
    maxBuffer: 256 << 20,
  })
}

/** Helm without blocking the event loop (requests go on while it waits for a rollout). */
export async function helmAsync(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    join(BIN_DIR, 'helm'),
    ['--kubeconfig', inject('kubeconfigPath'), ...args],
    { encoding: 'utf8' },
  )
  return stdout
}

/** kubectl without blocking the event loop: for commands that wait (a blocked test worker misses its RPC deadlines). */
export async function kubectlAsync(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    join(BIN_DIR, 'kubectl'),
    ['--kubeconfig', inject('kubeconfigPath'), ...args],
    { encoding: 'utf8' },
  )
  return stdout
}

/** `helm upgrade` of the tier's release with its values and `sets` (`key=value` each) over them, waiting for the rollout. */
export function upgradeRelease(...sets: string[]): Promise<string> {
  return helmAsync(
    'upgrade',
    RELEASE,
    CHART,
    '-n',
    NS,
    '--reuse-values',
    ...sets.flatMap((set) => ['--set', set]),
    '--wait',
    '--timeout',
    '5m',
  )
}

export function helm(...args: string[]): string {
  const r = spawnSync(join(BIN_DIR, 'helm'), ['--kubeconfig', inject('kubeconfigPath'), ...args], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`helm ${args.slice(0, 2).join(' ')} failed: ${r.stderr}`)
  return r.stdout
}

/** Puts a file on the tests' file server (the test-services pod) and returns its URL as runners reach it. */
export async function putFile(name: string, bytes: Buffer | string): Promise<string> {
  const res = await fetch(`${inject('filesUrl')}/${name}`, { method: 'PUT', body: bytes })
  if (res.status !== 201) throw new Error(`PUT ${name}: ${res.status}`)
  return `${inject('podFilesUrl')}/${name}`
}

export const core = () => kubeConfig().makeApiClient(CoreV1Api)

/** The runner pods a job has had. */
export async function runnerPodsOf(jobId: string): Promise<V1Pod[]> {
  return (await core().listNamespacedPod({ namespace: NS, labelSelector: `${LABELS.jobId}=${objectNameOf(jobId)}` }))
    .items
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Splits a command line the way a POSIX shell would (quotes), as JSON: bash does it. */
export function execShellWords(command: string): string {
  return execFileSync('bash', ['-c', `node -e 'console.log(JSON.stringify(process.argv.slice(1)))' -- ${command}`], {
    encoding: 'utf8',
  })
}

/**
 * html-pdf's one-call run of a page in the request whose picture is a form part (stored as the
 * key's upload), answered as the PDF: the response, and the PDF's title, which tells whether the
 * picture loaded ('picture loaded' or 'no picture').
 */
export async function renderPageWithPicture(gateway: string, key: string): Promise<{ res: Response; title?: string }> {
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
    'base64',
  )
  const page = new FormData()
  page.append(
    'input',
    JSON.stringify({
      html: `<body onload="document.title = document.images[0].naturalWidth > 0 ? 'picture loaded' : 'no picture'"><img src="logo.png"></body>`,
    }),
  )
  page.append('assets', new Blob([png]), 'logo.png')
  const res = await fetch(`${gateway}/v1/utilities/html-pdf`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, Accept: 'application/pdf' },
    body: page,
  })
  if (res.status !== 200) return { res }
  return { res, title: (await PDFDocument.load(new Uint8Array(await res.clone().arrayBuffer()))).getTitle() }
}

/** Pool mode for one utility, at its pool size, until a spare pool pod is ready. */
export async function poolOn(slug: string, size: number): Promise<void> {
  await upgradeRelease(
    `runners.${slug}.mode=pool`,
    `runners.${slug}.pool.size=${size}`,
    // This release gives xls-to-xlsx the OOM test's small limit (chart-values.ts); a pool pod
    // holds its runtime between jobs.
    ...(slug === 'xls-to-xlsx' ? [`runners.${slug}.resources.limits.memory=1Gi`] : []),
  )
  const ready = () =>
    (
      JSON.parse(kubectl(['-n', NS, 'get', 'pods', '-l', `${LABELS.pool}=${slug}`, '-o', 'json'])) as {
        items: Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }>
      }
    ).items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length
  await until(`a spare ${slug} pool pod ready`, async () => ready() >= 1, 120_000, 500)
}

/**
 * Back to job mode, and its pool pods gone: the next utility's pool gets the node to itself
 * (pool pods of every utility at once do not fit on one 2-core node).
 */
export async function poolOff(slug: string): Promise<void> {
  await upgradeRelease(`runners.${slug}.mode=job`)
  await kubectlAsync(['-n', NS, 'delete', 'pods', '-l', `${LABELS.pool}=${slug}`, '--wait=true'])
}
