import type { V1Affinity, V1LocalObjectReference, V1PodSpec, V1Toleration } from '@kubernetes/client-node'
import Type, { type Static } from 'typebox'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { catalog } from '../runners/catalog.js'
import { jsonObjectSetting } from '../contract/settings.js'

/**
 * Where and how runner pods run, as the platform team sets it (chart: `runnerPod` for every runner,
 * `runners.<slug>.pod` per runner): pull secrets of a private registry, node placement, priority,
 * a RuntimeClass (html-pdf under gVisor), a seccomp profile installed on the nodes, Chromium's
 * own sandbox, pod annotations and labels. dutil's own labels, the rest of the security context,
 * volumes and ServiceAccount stay as desiredJob makes them.
 */
export const RunnerPodSchema = Type.Object(
  {
    imagePullSecrets: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 20 })),
    nodeSelector: Type.Optional(Type.Record(Type.String(), Type.String())),
    tolerations: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 50 })),
    affinity: Type.Optional(Type.Object({}, { additionalProperties: true })),
    priorityClassName: Type.Optional(Type.String({ maxLength: 253 })),
    runtimeClassName: Type.Optional(Type.String({ maxLength: 253 })),
    seccompProfile: Type.Optional(
      Type.Union([
        Type.Object({ type: Type.Literal('RuntimeDefault') }, { additionalProperties: false }),
        Type.Object(
          {
            type: Type.Literal('Localhost'),
            localhostProfile: Type.String({
              minLength: 1,
              maxLength: 253,
              pattern: '^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$',
            }),
          },
          { additionalProperties: false },
        ),
      ]),
    ),
    browserSandbox: Type.Optional(Type.Boolean()),
    annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: false },
)
export type RunnerPod = Static<typeof RunnerPodSchema>

const validate = new Ajv2020({ strict: false }).compile(RunnerPodSchema)

/**
 * `DUTIL_RUNNER_POD`: JSON `{ "default": {…}, "<slug>": {…} }`; a runner's own entry replaces
 * the default's fields it names. Checked at start: an unknown utility, an unknown field or a
 * value of the wrong kind stops the operator naming it. Returns each utility's template.
 */
export function parseRunnerPods(raw: string | undefined): Record<string, RunnerPod> {
  const out: Record<string, RunnerPod> = Object.fromEntries([...catalog.keys()].map((slug) => [slug, {}]))
  if (!raw) return out
  const entries = jsonObjectSetting('DUTIL_RUNNER_POD', raw, '"default" or a utility')
  for (const [name, value] of Object.entries(entries)) {
    if (name !== 'default' && !catalog.has(name)) throw new Error(`DUTIL_RUNNER_POD: ${name} is not a utility`)
    if (!validate(value)) {
      const first = validate.errors?.[0]
      const extra = (first?.params as { additionalProperty?: string } | undefined)?.additionalProperty
      throw new Error(
        `DUTIL_RUNNER_POD: ${name}${first?.instancePath ?? ''} ${first?.message ?? 'is not valid'}${extra ? ` (${extra})` : ''}`,
      )
    }
  }
  const base = (entries.default ?? {}) as RunnerPod
  for (const slug of Object.keys(out)) {
    const pod = { ...base, ...((entries[slug] ?? {}) as RunnerPod) }
    if (pod.browserSandbox && !catalog.get(slug)!.runner.browser) {
      if (entries[slug] && (entries[slug] as RunnerPod).browserSandbox) {
        throw new Error(`DUTIL_RUNNER_POD: ${slug} runs no browser, so browserSandbox means nothing for it`)
      }
      delete pod.browserSandbox // the default's: it reaches the runners that start a browser
    }
    if (pod.browserSandbox && pod.seccompProfile?.type !== 'Localhost' && !pod.runtimeClassName) {
      throw new Error(
        `DUTIL_RUNNER_POD: ${slug} browserSandbox needs a seccompProfile of type Localhost that allows user namespaces (the chart's files/chromium-sandbox-seccomp.json) or a runtimeClassName that provides them: the runtime's default profile refuses them and Chromium would not start`,
      )
    }
    out[slug] = pod
  }
  return out
}

/** The runner's own settings a template adds to its environment (pure): Chromium's sandbox. */
export function podEnv(t: RunnerPod | undefined): Array<{ name: string; value: string }> {
  return t?.browserSandbox ? [{ name: 'DUTIL_CHROMIUM_SANDBOX', value: 'true' }] : []
}

/** The pod-spec fields a template sets (pure); nothing when it is empty. */
export function podPlacement(t: RunnerPod | undefined): Partial<V1PodSpec> {
  if (!t) return {}
  return {
    ...(t.imagePullSecrets?.length
      ? { imagePullSecrets: t.imagePullSecrets.map((name): V1LocalObjectReference => ({ name })) }
      : {}),
    ...(t.nodeSelector && Object.keys(t.nodeSelector).length ? { nodeSelector: t.nodeSelector } : {}),
    ...(t.tolerations?.length ? { tolerations: t.tolerations as V1Toleration[] } : {}),
    ...(t.affinity && Object.keys(t.affinity).length ? { affinity: t.affinity as V1Affinity } : {}),
    ...(t.priorityClassName ? { priorityClassName: t.priorityClassName } : {}),
    ...(t.runtimeClassName ? { runtimeClassName: t.runtimeClassName } : {}),
  }
}
