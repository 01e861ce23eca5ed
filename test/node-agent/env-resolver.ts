// Builds a container's environment the way kubelet does (pkg/kubelet/kubelet_pods.go
// makeEnvironmentVariables): envFrom first, then env in order with `$(VAR)` expansion against the
// variables declared so far plus the service variables, then the remaining service variables.
// Pure: the Secrets and ConfigMaps are fetched beforehand (pod-objects.ts).
import type { V1Container, V1EnvVar, V1Pod } from '@kubernetes/client-node'
import { PodConfigError } from './config-error.js'
import { NODE_IP, POD_IP } from './node-constants.js'
import type { PodObjects } from './pod-objects.js'

type Mapping = (name: string) => string

/** kubelet's `$(VAR)` expansion: `$$` escapes, unknown references stay literally `$(VAR)`. */
export function expand(input: string, mapping: Mapping): string {
  let out = ''
  let checkpoint = 0
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] === '$' && cursor + 1 < input.length) {
      out += input.slice(checkpoint, cursor)
      const { read, isVar, advance } = tryReadVariableName(input.slice(cursor + 1))
      out += isVar ? mapping(read) : read
      cursor += advance
      checkpoint = cursor + 1
    }
  }
  return out + input.slice(checkpoint)
}

function tryReadVariableName(input: string): { read: string; isVar: boolean; advance: number } {
  const ch = String.fromCodePoint(input.codePointAt(0) ?? 0)
  if (ch === '$') return { read: '$', isVar: false, advance: 1 }
  if (ch === '(') {
    const close = input.indexOf(')', 1)
    if (close >= 0) return { read: input.slice(1, close), isVar: true, advance: close + 1 }
    return { read: '$(', isVar: false, advance: 1 }
  }
  return { read: `$${ch}`, isVar: false, advance: ch.length }
}

export function mappingFor(...contexts: ReadonlyArray<ReadonlyMap<string, string>>): Mapping {
  return (name) => {
    for (const ctx of contexts) {
      const v = ctx.get(name)
      if (v !== undefined) return v
    }
    return `$(${name})`
  }
}

function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify((m ?? {})[k])}`)
    .join('\n')
}

/** Downward API field values (env `fieldRef` and downwardAPI volume items). */
export function fieldRefValue(pod: V1Pod, fieldPath: string): string {
  const sub = /^(metadata\.(?:labels|annotations))\['(.*)'\]$/.exec(fieldPath)
  if (sub) {
    const map = sub[1] === 'metadata.labels' ? pod.metadata?.labels : pod.metadata?.annotations
    return map?.[sub[2]] ?? ''
  }
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata?.name ?? ''
    case 'metadata.namespace':
      return pod.metadata?.namespace ?? ''
    case 'metadata.uid':
      return pod.metadata?.uid ?? ''
    case 'metadata.labels':
      return formatMap(pod.metadata?.labels)
    case 'metadata.annotations':
      return formatMap(pod.metadata?.annotations)
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? ''
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? ''
    case 'status.podIP':
    case 'status.podIPs':
      return POD_IP
    case 'status.hostIP':
    case 'status.hostIPs':
      return NODE_IP
    default:
      throw new PodConfigError(`unsupported fieldPath: ${fieldPath}`)
  }
}

/** The value of one `valueFrom` entry, or undefined when an optional source is absent. */
function valueFromSource(pod: V1Pod, env: V1EnvVar, objects: PodObjects): string | undefined {
  const ns = pod.metadata?.namespace ?? ''
  const from = env.valueFrom!
  if (from.fieldRef) return fieldRefValue(pod, from.fieldRef.fieldPath)
  if (from.secretKeyRef) {
    const { name = '', key, optional } = from.secretKeyRef
    const secret = objects.secrets.get(name)
    if (!secret) {
      if (optional) return undefined
      throw new PodConfigError(`secret "${name}" not found`)
    }
    const value = secret.data[key]
    if (value === undefined) {
      if (optional) return undefined
      throw new PodConfigError(`couldn't find key ${key} in Secret ${ns}/${name}`)
    }
    return value.toString('utf8')
  }
  if (from.configMapKeyRef) {
    const { name = '', key, optional } = from.configMapKeyRef
    const cm = objects.configMaps.get(name)
    if (!cm) {
      if (optional) return undefined
      throw new PodConfigError(`configmap "${name}" not found`)
    }
    const value = cm.data[key]
    if (value === undefined) {
      if (optional) return undefined
      throw new PodConfigError(`couldn't find key ${key} in ConfigMap ${ns}/${name}`)
    }
    return value
  }
  if (from.resourceFieldRef)
    throw new PodConfigError(`env ${env.name}: resourceFieldRef is not supported by the dutil node agent`)
  throw new PodConfigError(`env ${env.name}: unsupported valueFrom source`)
}

/**
 * The container's declared environment (envFrom, env, then service variables not overridden).
 * Throws PodConfigError for a missing non-optional Secret/ConfigMap/key.
 */
export function resolveContainerEnv(
  pod: V1Pod,
  container: V1Container,
  objects: PodObjects,
  serviceEnv: ReadonlyMap<string, string>,
): Map<string, string> {
  const tmpEnv = new Map<string, string>()
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? ''
    if (from.configMapRef) {
      const cm = objects.configMaps.get(from.configMapRef.name ?? '')
      if (!cm) {
        if (from.configMapRef.optional) continue
        throw new PodConfigError(`configmap "${from.configMapRef.name}" not found`)
      }
      for (const [k, v] of Object.entries(cm.data)) tmpEnv.set(prefix + k, v)
    } else if (from.secretRef) {
      const secret = objects.secrets.get(from.secretRef.name ?? '')
      if (!secret) {
        if (from.secretRef.optional) continue
        throw new PodConfigError(`secret "${from.secretRef.name}" not found`)
      }
      for (const [k, v] of Object.entries(secret.data)) tmpEnv.set(prefix + k, v.toString('utf8'))
    }
  }
  const mapping = mappingFor(tmpEnv, serviceEnv)
  for (const env of container.env ?? []) {
    let value: string | undefined = env.value ?? ''
    if (value !== '') value = expand(value, mapping)
    else if (env.valueFrom) value = valueFromSource(pod, env, objects)
    if (value === undefined) continue
    tmpEnv.set(env.name, value)
  }
  const result = new Map(tmpEnv)
  for (const [k, v] of serviceEnv) if (!result.has(k)) result.set(k, v)
  return result
}

/** kubelet expands `$(VAR)` in command and args against the container's final environment. */
export function expandCommand(argv: readonly string[], env: ReadonlyMap<string, string>): string[] {
  const mapping = mappingFor(env)
  return argv.map((a) => expand(a, mapping))
}

/** The variables kubelet injects for the `kubernetes` Service, pointed at the real API server. */
export function serviceEnvFor(apiServerUrl: string): Map<string, string> {
  const url = new URL(apiServerUrl)
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const port = url.port || (url.protocol === 'http:' ? '80' : '443')
  return new Map([
    ['KUBERNETES_SERVICE_HOST', host],
    ['KUBERNETES_SERVICE_PORT', port],
    ['KUBERNETES_SERVICE_PORT_HTTPS', port],
    ['KUBERNETES_PORT', `tcp://${url.hostname}:${port}`],
  ])
}
