import type { V1Container, V1EnvVar, V1Job, V1PodSpec } from '@kubernetes/client-node'
import { ANNOTATIONS, API_GROUP_VERSION, LABELS, MANAGED_BY, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { CLASSIFIED_EXIT_CODES, ENV, type RunnerCredentials } from '../contract/runner-protocol.js'
import type { RunnerResources, UtilityDefinition } from '../contract/utility.js'
import type { RunnerPool } from './config.js'
import { podEnv, podPlacement, type RunnerPod } from './runner-pod.js'

export const RUNNER_CONTAINER = 'runner'
/** How long past the Job's time limit a runner pod's own deadline lies. */
export const POD_DEADLINE_MARGIN_SECONDS = 60
/** Where a runner's scratch emptyDir is mounted (TMPDIR and HOME point there). */
export const SCRATCH_PATH = '/tmp'

export interface RunnerSettings {
  imageRegistry: string
  imageTag: string
  storage: { endpoint: string; region: string; bucket: string }
  allowLoopbackUrls: boolean
  /** Private networks runners may fetch from (DUTIL_ALLOWED_PRIVATE_NETWORKS, comma-separated CIDRs); none when empty. */
  allowedNetworks?: string
  /** The cluster's pod and Service ranges (DUTIL_CLUSTER_NETWORKS), refused like private ranges. */
  clusterNetworks?: string
  /** Finished Jobs are removed after this long; the UtilityJob keeps the outcome. */
  jobTtlSeconds: number
  /** Per-utility requests and limits that replace the catalog's (operator setting DUTIL_RUNNER_RESOURCES). */
  resources?: Record<string, RunnerResources>
  /** Per-utility pod placement, pull secrets, annotations and labels (operator setting DUTIL_RUNNER_POD). */
  pods?: Record<string, RunnerPod>
  /** The utilities run in pool mode (DUTIL_RUNNER_POOLS): long-lived runner pods, no Job per job. */
  pools?: Record<string, RunnerPool>
  /** The collector runners send their spans to, when tracing is on (docs/observability.md). */
  tracing?: { endpoint: string; servicePrefix: string }
}

/** Name of the batch/v1 Job for a UtilityJob: the same name, so a retry can never make a second one. */
export function jobNameFor(uj: UtilityJobResource): string {
  return uj.metadata.name
}

export function deadlineSeconds(uj: UtilityJobResource, utility: UtilityDefinition): number {
  const override = uj.spec.deadlineSeconds
  return override && override < utility.maxDurationSeconds ? override : utility.maxDurationSeconds
}

/** The node flags a runner runs with (its V8 heap cap first), before its entry: pods and benchmarks alike. */
export function runnerNodeArgs(utility: UtilityDefinition): string[] {
  return [`--max-old-space-size=${utility.runner.maxHeapMb}`, ...(utility.runner.nodeFlags ?? [])]
}

/**
 * The Job that runs one UtilityJob. Pure: same inputs, same Job. The runner gets `credentials`,
 * temporary storage credentials for its own job's objects alone (operator/runner-credentials.ts),
 * never the platform's.
 */

export function desiredJob(
  uj: UtilityJobResource,
  utility: UtilityDefinition,
  settings: RunnerSettings,
  credentials: RunnerCredentials,
): V1Job {
  const pod = settings.pods?.[utility.slug]
  // The platform team's labels first: dutil's own (which its NetworkPolicy and watches select on) win.
  const labels = {
    ...(pod?.labels ?? {}),
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.jobId]: uj.metadata.name,
    [LABELS.utility]: utility.slug,
  }
  const env: V1EnvVar[] = [
    { name: ENV.jobId, value: uj.spec.jobId },
    { name: ENV.utility, value: utility.slug },
    { name: ENV.createdAt, value: uj.spec.createdAt },
    ...runnerBaseEnv(settings),
  ]
  const traceparent = uj.metadata.annotations?.[ANNOTATIONS.traceparent]
  if (settings.tracing && traceparent)
    env.push(
      { name: ENV.traceparent, value: traceparent },
      { name: ENV.tracingEndpoint, value: settings.tracing.endpoint },
      { name: ENV.tracingServiceName, value: `${settings.tracing.servicePrefix}runner-${utility.slug}` },
    )
  env.push({ name: ENV.accessKey, value: credentials.accessKey }, { name: ENV.secretKey, value: credentials.secretKey })
  if (credentials.sessionToken) env.push({ name: ENV.sessionToken, value: credentials.sessionToken })
  if (credentials.sealKey) env.push({ name: ENV.sealKey, value: credentials.sealKey })
  if (uj.spec.sealedInput) env.push({ name: ENV.sealedInput, value: uj.spec.sealedInput })
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobNameFor(uj),
      namespace: uj.metadata.namespace,
      labels,
      ownerReferences: [
        {
          apiVersion: API_GROUP_VERSION,
          kind: UTILITY_JOB.kind,
          name: uj.metadata.name,
          uid: uj.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      activeDeadlineSeconds: deadlineSeconds(uj, utility),
      backoffLimit: utility.runner.backoffLimit,
      ttlSecondsAfterFinished: settings.jobTtlSeconds,
      podFailurePolicy: {
        rules: [
          // A classified failure (rejected input, storage error) will not get better on retry.
          {
            action: 'FailJob',
            onExitCodes: { containerName: RUNNER_CONTAINER, operator: 'In', values: [...CLASSIFIED_EXIT_CODES] },
          },
          // Evictions and node loss are not the runner's fault: retry without counting.
          { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
        ],
      },
      template: {
        metadata: {
          labels,
          ...(pod?.annotations && Object.keys(pod.annotations).length ? { annotations: pod.annotations } : {}),
        },
        spec: {
          ...runnerPodSpec(utility, settings, { command: runnerCommand(utility, utility.runner.entry), env }),
          // A backstop well past the Job's time limit (which always ends the run first); it puts
          // runner pods in the ResourceQuota scope `Terminating` (the chart's runner quota).
          activeDeadlineSeconds: deadlineSeconds(uj, utility) + POD_DEADLINE_MARGIN_SECONDS,
          restartPolicy: 'Never',
        },
      },
    },
  }
}

/** What every runner's environment holds, job mode or pool mode: where storage is, what it may fetch. */
export function runnerBaseEnv(settings: RunnerSettings): V1EnvVar[] {
  return [
    { name: ENV.endpoint, value: settings.storage.endpoint },
    { name: ENV.region, value: settings.storage.region },
    { name: ENV.bucket, value: settings.storage.bucket },
    { name: ENV.allowLoopback, value: String(settings.allowLoopbackUrls) },
    ...(settings.allowedNetworks ? [{ name: ENV.allowedNetworks, value: settings.allowedNetworks }] : []),
    ...(settings.clusterNetworks ? [{ name: ENV.clusterNetworks, value: settings.clusterNetworks }] : []),
  ]
}

/** The runner's command: node with its flags, running `entry` inside the image. */
export function runnerCommand(utility: UtilityDefinition, entry: string): string[] {
  return ['node', ...runnerNodeArgs(utility), `/app/${entry}`]
}

/**
 * A runner pod's spec, job mode or pool mode (pure): the platform team's placement, no
 * service-account token, non-root with the runtime's seccomp profile (or one the platform team
 * installed on its nodes), a read-only root, the utility's resources and scratch space.
 * `container` adds the command, environment and what else the mode needs (pool mode: its port
 * and readiness probe).
 */
export function runnerPodSpec(
  utility: UtilityDefinition,
  settings: RunnerSettings,
  container: { command: string[]; env: V1EnvVar[] } & Partial<V1Container>,
): V1PodSpec {
  const pod = settings.pods?.[utility.slug]
  const scratch = utility.runner.scratchSizeLimit
  const env = [...container.env, ...podEnv(pod)]
  if (scratch) env.push({ name: 'TMPDIR', value: SCRATCH_PATH }, { name: 'HOME', value: SCRATCH_PATH })
  return {
    ...podPlacement(pod),
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    terminationGracePeriodSeconds: 10,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 10001,
      seccompProfile: pod?.seccompProfile ?? { type: 'RuntimeDefault' },
    },
    ...(scratch ? { volumes: [{ name: 'scratch', emptyDir: { sizeLimit: scratch } }] } : {}),
    containers: [
      {
        name: RUNNER_CONTAINER,
        image: `${settings.imageRegistry}/${utility.runner.image}:${settings.imageTag}`,
        resources: settings.resources?.[utility.slug] ?? utility.runner.resources,
        terminationMessagePolicy: 'FallbackToLogsOnError',
        ...(scratch ? { volumeMounts: [{ name: 'scratch', mountPath: SCRATCH_PATH }] } : {}),
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        },
        ...container,
        env,
      },
    ],
  }
}
