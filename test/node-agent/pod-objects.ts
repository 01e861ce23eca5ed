// The Secrets and ConfigMaps a pod references (env, envFrom, volumes), fetched once per start
// attempt. `null` records "not found" so that `optional` references can be honoured later.
import type { CoreV1Api, V1Container, V1Pod, V1Volume } from '@kubernetes/client-node'
import { isNotFound } from './kube-errors.js'

export interface FetchedSecret {
  data: Record<string, Buffer>
}

export interface FetchedConfigMap {
  data: Record<string, string>
  binaryData: Record<string, Buffer>
}

export interface PodObjects {
  secrets: Map<string, FetchedSecret | null>
  configMaps: Map<string, FetchedConfigMap | null>
}

export interface ObjectReferences {
  secrets: Set<string>
  configMaps: Set<string>
}

export function allContainers(pod: V1Pod): V1Container[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]
}

export function collectReferences(pod: V1Pod): ObjectReferences {
  const refs: ObjectReferences = { secrets: new Set(), configMaps: new Set() }
  for (const c of allContainers(pod)) {
    for (const from of c.envFrom ?? []) {
      if (from.secretRef?.name) refs.secrets.add(from.secretRef.name)
      if (from.configMapRef?.name) refs.configMaps.add(from.configMapRef.name)
    }
    for (const e of c.env ?? []) {
      if (e.value) continue
      if (e.valueFrom?.secretKeyRef?.name) refs.secrets.add(e.valueFrom.secretKeyRef.name)
      if (e.valueFrom?.configMapKeyRef?.name) refs.configMaps.add(e.valueFrom.configMapKeyRef.name)
    }
  }
  for (const v of pod.spec?.volumes ?? []) collectVolumeReferences(v, refs)
  return refs
}

function collectVolumeReferences(v: V1Volume, refs: ObjectReferences): void {
  if (v.secret?.secretName) refs.secrets.add(v.secret.secretName)
  if (v.configMap?.name) refs.configMaps.add(v.configMap.name)
  for (const s of v.projected?.sources ?? []) {
    if (s.secret?.name) refs.secrets.add(s.secret.name)
    if (s.configMap?.name) refs.configMaps.add(s.configMap.name)
  }
}

function decodeMap(data: Record<string, string> | undefined): Record<string, Buffer> {
  const out: Record<string, Buffer> = {}
  for (const [k, v] of Object.entries(data ?? {})) out[k] = Buffer.from(v, 'base64')
  return out
}

/** Reads every referenced object; NotFound becomes `null`, any other error propagates. */
export async function fetchPodObjects(core: CoreV1Api, namespace: string, refs: ObjectReferences): Promise<PodObjects> {
  const objects: PodObjects = { secrets: new Map(), configMaps: new Map() }
  await Promise.all([
    ...[...refs.secrets].map(async (name) => {
      try {
        const s = await core.readNamespacedSecret({ name, namespace })
        const data = decodeMap(s.data)
        for (const [k, v] of Object.entries(s.stringData ?? {})) data[k] = Buffer.from(v, 'utf8')
        objects.secrets.set(name, { data })
      } catch (err) {
        if (!isNotFound(err)) throw err
        objects.secrets.set(name, null)
      }
    }),
    ...[...refs.configMaps].map(async (name) => {
      try {
        const cm = await core.readNamespacedConfigMap({ name, namespace })
        objects.configMaps.set(name, { data: { ...(cm.data ?? {}) }, binaryData: decodeMap(cm.binaryData) })
      } catch (err) {
        if (!isNotFound(err)) throw err
        objects.configMaps.set(name, null)
      }
    }),
  ])
  return objects
}
