import { createHash } from 'node:crypto'
import type { V1Pod } from '@kubernetes/client-node'
import { LABELS, MANAGED_BY } from '../contract/api-group.js'
import { POOL } from '../contract/runner-protocol.js'
import type { UtilityDefinition } from '../contract/utility.js'
import type { RunnerPool } from './config.js'
import { RUNNER_CONTAINER, runnerBaseEnv, runnerCommand, runnerPodSpec, type RunnerSettings } from './desired-job.js'

/**
 * Pool mode's pods (docs/adr/0026-runner-pools.md): `size` long-lived runner pods per pooled
 * utility, made and replaced by the operator, each taking one job at a time. Which job a pod
 * holds is that job's `status.runnerPod`.
 */

/** The annotation with the hash of a pool pod's spec: a pod made from other settings is replaced when idle. */
export const POOL_SPEC_ANNOTATION = 'dutil.io/pool-spec'

export function poolPodName(slug: string, index: number): string {
  return `dutil-pool-${slug}-${index}`
}

/** A label-safe, opaque name of a tenant (an API key, or one person's playground). */
export function tenantHash(tenant: string): string {
  return createHash('sha256').update(tenant).digest('hex').slice(0, 32)
}

/**
 * Pool pod `index` of a utility (pure, but for `token`, which the caller makes): the runner pod
 * of job mode, long-lived, running the utility's pool program with its port and a readiness
 * probe. `token` is the bearer token the operator calls it with.
 */
export function desiredPoolPod(
  utility: UtilityDefinition,
  settings: RunnerSettings,
  pool: RunnerPool,
  index: number,
  namespace: string,
  token: string,
): V1Pod {
  const placement = settings.pods?.[utility.slug]
  const env = [
    ...runnerBaseEnv(settings),
    { name: POOL.restartEveryEnv, value: String(pool.restartEvery) },
    { name: POOL.warmSlotsEnv, value: String(pool.browsers) },
    { name: POOL.tokenEnv, value: token },
  ]
  const spec = runnerPodSpec(utility, settings, {
    command: runnerCommand(utility, utility.runner.poolEntry!),
    env,
    ports: [{ name: 'pool', containerPort: POOL.port, protocol: 'TCP' }],
    readinessProbe: {
      httpGet: { path: '/healthz', port: POOL.port },
      periodSeconds: 2,
      failureThreshold: 1,
    },
  })
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: poolPodName(utility.slug, index),
      namespace,
      labels: {
        ...(placement?.labels ?? {}),
        [LABELS.managedBy]: MANAGED_BY,
        [LABELS.utility]: utility.slug,
        [LABELS.pool]: utility.slug,
      },
      annotations: {
        ...(placement?.annotations ?? {}),
        [POOL_SPEC_ANNOTATION]: specHash(spec, pool),
      },
    },
    spec: { ...spec, restartPolicy: 'Never' },
  }
}

/** The hash of what a pool pod runs, its token aside (each pod has its own). */
function specHash(spec: V1Pod['spec'], pool: RunnerPool): string {
  const container = spec!.containers[0]
  const withoutToken = {
    ...spec,
    containers: [{ ...container, env: container.env?.filter((e) => e.name !== POOL.tokenEnv) }],
  }
  return createHash('sha256')
    .update(JSON.stringify({ spec: withoutToken, pool }))
    .digest('hex')
    .slice(0, 16)
}

/** The pool pod's spec hash as the settings would make it now. */
export function wantedSpecHash(desired: V1Pod): string {
  return desired.metadata!.annotations![POOL_SPEC_ANNOTATION]
}

/** The bearer token a pool pod was made with (its environment). */
export function poolToken(pod: V1Pod): string | undefined {
  return pod.spec?.containers?.find((c) => c.name === RUNNER_CONTAINER)?.env?.find((e) => e.name === POOL.tokenEnv)
    ?.value
}

export function isPoolPod(pod: V1Pod, slug?: string): boolean {
  const pool = pod.metadata?.labels?.[LABELS.pool]
  return pool !== undefined && (slug === undefined || pool === slug)
}

/** Gone or going: finished, failed, or being deleted. */
export function poolPodEnded(pod: V1Pod): boolean {
  return Boolean(pod.metadata?.deletionTimestamp) || ['Succeeded', 'Failed'].includes(pod.status?.phase ?? '')
}

function ready(pod: V1Pod): boolean {
  return (
    !poolPodEnded(pod) &&
    Boolean(pod.status?.podIP) &&
    (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  )
}

/**
 * The pod for a job of `tenant` among a utility's pool pods (pure): a ready pod holding no job
 * (`busy`: the pods unfinished jobs hold, or are being handed), best one with a browser warm for
 * this tenant (`warm`: the tenants each pod served lately, most recent last, as many as it keeps
 * browsers), then one with a browser that served nobody yet, then the one whose browsers served
 * the least recently (it starts one afresh first). With `preferWarm`, a job whose tenant has a
 * warm browser only in a busy pod waits for that pod (undefined) rather than start one afresh.
 */
export function choosePoolPod(
  pods: readonly V1Pod[],
  tenant: string,
  busy: ReadonlySet<string>,
  warm: ReadonlyMap<string, { tenants: readonly string[]; lastUsed: number }>,
  browsers: number,
  preferWarm = false,
): V1Pod | undefined {
  const usable = pods.filter((p) => ready(p)).sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!))
  const idle = usable.filter((p) => !busy.has(p.metadata!.name!))
  const of = (p: V1Pod) => warm.get(p.metadata!.name!) ?? { tenants: [], lastUsed: 0 }
  const least = (a: V1Pod | undefined, b: V1Pod) => (!a || of(b).lastUsed < of(a).lastUsed ? b : a)
  const own = idle.find((p) => of(p).tenants.includes(tenant))
  if (own) return own
  const spare = idle.find((p) => of(p).tenants.length < browsers)
  if (spare) return spare
  if (preferWarm && usable.some((p) => of(p).tenants.includes(tenant))) return undefined
  return idle.reduce<V1Pod | undefined>(least, undefined)
}
