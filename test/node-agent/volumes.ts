// Pod volumes on the host: every volume becomes a directory under `<pod dir>/volumes/<name>`
// (or a host path), later bind-mounted onto each container's mountPath by mount-script.ts.
// planVolume is pure (what files to write); materializeVolumes does the writing.
import { constants as fsConstants } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { V1Container, V1KeyToPath, V1Pod, V1Volume } from '@kubernetes/client-node'
import { PodConfigError } from './config-error.js'
import { fieldRefValue } from './env-resolver.js'
import type { FetchedConfigMap, FetchedSecret, PodObjects } from './pod-objects.js'

const DEFAULT_MODE = 0o644

export interface VolumeFile {
  path: string
  mode: number
  content: Buffer
}

/** A projected service account token, requested through the TokenRequest API at materialisation. */
export interface TokenFile {
  path: string
  mode: number
  audience?: string
  expirationSeconds: number
}

export type VolumePlan =
  | { name: string; kind: 'files'; files: VolumeFile[]; tokens: TokenFile[] }
  | { name: string; kind: 'emptyDir' }
  | { name: string; kind: 'hostPath'; path: string; type: string }

/** Volume kinds whose content comes from the API; kubelet always mounts them read-only. */
const API_DATA_KINDS = ['secret', 'configMap', 'downwardAPI', 'projected'] as const

function volumeError(message: string): PodConfigError {
  return new PodConfigError(message, 'ContainerCreating')
}

function keyedFiles(
  what: 'secret' | 'configmap',
  data: Record<string, Buffer>,
  items: V1KeyToPath[] | undefined,
  optional: boolean,
  defaultMode: number,
): VolumeFile[] {
  if (!items || items.length === 0) {
    return Object.entries(data).map(([key, content]) => ({ path: key, mode: defaultMode, content }))
  }
  const files: VolumeFile[] = []
  for (const item of items) {
    const content = data[item.key]
    if (content === undefined) {
      if (optional) continue
      throw volumeError(
        what === 'secret'
          ? `references non-existent secret key: ${item.key}`
          : `configmap references non-existent config key: ${item.key}`,
      )
    }
    files.push({ path: item.path, mode: item.mode ?? defaultMode, content })
  }
  return files
}

function secretFiles(
  name: string,
  secret: FetchedSecret | null | undefined,
  items: V1KeyToPath[] | undefined,
  optional: boolean,
  defaultMode: number,
): VolumeFile[] {
  if (!secret) {
    if (optional) return []
    throw volumeError(`secret "${name}" not found`)
  }
  return keyedFiles('secret', secret.data, items, optional, defaultMode)
}

function configMapFiles(
  name: string,
  cm: FetchedConfigMap | null | undefined,
  items: V1KeyToPath[] | undefined,
  optional: boolean,
  defaultMode: number,
): VolumeFile[] {
  if (!cm) {
    if (optional) return []
    throw volumeError(`configmap "${name}" not found`)
  }
  const data: Record<string, Buffer> = { ...cm.binaryData }
  for (const [k, v] of Object.entries(cm.data)) data[k] = Buffer.from(v, 'utf8')
  return keyedFiles('configmap', data, items, optional, defaultMode)
}

function downwardFiles(
  pod: V1Pod,
  items:
    Array<{ path: string; mode?: number; fieldRef?: { fieldPath: string }; resourceFieldRef?: unknown }> | undefined,
  defaultMode: number,
): VolumeFile[] {
  return (items ?? []).map((item) => {
    if (!item.fieldRef)
      throw volumeError(`downwardAPI ${item.path}: only fieldRef items are supported by the dutil node agent`)
    return {
      path: item.path,
      mode: item.mode ?? defaultMode,
      content: Buffer.from(fieldRefValue(pod, item.fieldRef.fieldPath)),
    }
  })
}

export function planVolume(pod: V1Pod, volume: V1Volume, objects: PodObjects): VolumePlan {
  const name = volume.name
  if (volume.emptyDir) return { name, kind: 'emptyDir' }
  if (volume.hostPath) return { name, kind: 'hostPath', path: volume.hostPath.path, type: volume.hostPath.type ?? '' }
  if (volume.secret) {
    const s = volume.secret
    const sName = s.secretName ?? ''
    const files = secretFiles(
      sName,
      objects.secrets.get(sName),
      s.items,
      s.optional ?? false,
      s.defaultMode ?? DEFAULT_MODE,
    )
    return { name, kind: 'files', files, tokens: [] }
  }
  if (volume.configMap) {
    const c = volume.configMap
    const cName = c.name ?? ''
    const files = configMapFiles(
      cName,
      objects.configMaps.get(cName),
      c.items,
      c.optional ?? false,
      c.defaultMode ?? DEFAULT_MODE,
    )
    return { name, kind: 'files', files, tokens: [] }
  }
  if (volume.downwardAPI) {
    const files = downwardFiles(pod, volume.downwardAPI.items, volume.downwardAPI.defaultMode ?? DEFAULT_MODE)
    return { name, kind: 'files', files, tokens: [] }
  }
  if (volume.projected) {
    const mode = volume.projected.defaultMode ?? DEFAULT_MODE
    const files: VolumeFile[] = []
    const tokens: TokenFile[] = []
    for (const src of volume.projected.sources ?? []) {
      if (src.secret) {
        const n = src.secret.name ?? ''
        files.push(...secretFiles(n, objects.secrets.get(n), src.secret.items, src.secret.optional ?? false, mode))
      } else if (src.configMap) {
        const n = src.configMap.name ?? ''
        files.push(
          ...configMapFiles(n, objects.configMaps.get(n), src.configMap.items, src.configMap.optional ?? false, mode),
        )
      } else if (src.downwardAPI) {
        files.push(...downwardFiles(pod, src.downwardAPI.items, mode))
      } else if (src.serviceAccountToken) {
        const t = src.serviceAccountToken
        tokens.push({
          path: t.path,
          mode,
          audience: t.audience || undefined,
          expirationSeconds: t.expirationSeconds ?? 3600,
        })
      } else {
        throw volumeError(
          `volume ${name}: projected source ${Object.keys(src).join(',')} is not supported by the dutil node agent`,
        )
      }
    }
    return { name, kind: 'files', files, tokens }
  }
  const kind = Object.keys(volume).find((k) => k !== 'name') ?? 'unknown'
  throw volumeError(`volume ${name}: type ${kind} is not supported by the dutil node agent`)
}

export function isApiDataVolume(volume: V1Volume): boolean {
  return API_DATA_KINDS.some((k) => volume[k] !== undefined)
}

/** Joins a relative item path under `dir`, refusing anything that would escape it. */
export function safeJoin(dir: string, rel: string): string {
  const full = path.resolve(dir, rel)
  if (full !== dir && !full.startsWith(dir + path.sep))
    throw volumeError(`path ${JSON.stringify(rel)} escapes its volume`)
  return full
}

export type TokenProvider = (audience: string | undefined, expirationSeconds: number) => Promise<string>

async function writeFiles(
  dir: string,
  files: ReadonlyArray<{ path: string; mode: number; content: Buffer }>,
): Promise<void> {
  for (const f of files) {
    const target = safeJoin(dir, f.path)
    await fs.mkdir(path.dirname(target), { recursive: true })
    await fs.writeFile(target, f.content, { mode: f.mode })
    await fs.chmod(target, f.mode)
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p, fsConstants.F_OK)
    return true
  } catch {
    return false
  }
}

async function prepareHostPath(plan: Extract<VolumePlan, { kind: 'hostPath' }>): Promise<void> {
  switch (plan.type) {
    case 'DirectoryOrCreate':
      await fs.mkdir(plan.path, { recursive: true })
      return
    case 'FileOrCreate':
      await fs.mkdir(path.dirname(plan.path), { recursive: true })
      if (!(await exists(plan.path))) await fs.writeFile(plan.path, '')
      return
    case '':
      return
    default:
      if (!(await exists(plan.path))) throw volumeError(`hostPath ${plan.path} does not exist (type ${plan.type})`)
  }
}

/**
 * Writes every volume of the pod under `<podDir>/volumes/` (fresh on each start attempt) and
 * returns the host path of each volume by name.
 */
export async function materializeVolumes(
  podDir: string,
  plans: readonly VolumePlan[],
  tokenFor: TokenProvider,
): Promise<Map<string, string>> {
  const root = path.join(podDir, 'volumes')
  const hostPaths = new Map<string, string>()
  for (const plan of plans) {
    if (plan.kind === 'hostPath') {
      await prepareHostPath(plan)
      hostPaths.set(plan.name, plan.path)
      continue
    }
    const dir = safeJoin(root, plan.name)
    await fs.rm(dir, { recursive: true, force: true })
    await fs.mkdir(dir, { recursive: true, mode: 0o777 })
    await fs.chmod(dir, 0o777)
    if (plan.kind === 'files') {
      await writeFiles(dir, plan.files)
      const tokens = await Promise.all(
        plan.tokens.map(async (t) => ({
          path: t.path,
          mode: t.mode,
          content: Buffer.from(await tokenFor(t.audience, t.expirationSeconds)),
        })),
      )
      await writeFiles(dir, tokens)
      await fs.chmod(dir, 0o755)
    }
    hostPaths.set(plan.name, dir)
  }
  return hostPaths
}

/** One bind mount of a container: host `source` onto `target` inside the mount namespace. */
export interface ContainerMount {
  source: string
  target: string
  readOnly: boolean
  /** The source is a regular file (subPath to a file, termination log), not a directory. */
  file: boolean
}

/** Resolves a container's volumeMounts against the materialised volumes. */
export async function containerMounts(
  pod: V1Pod,
  container: V1Container,
  volumeHostPaths: ReadonlyMap<string, string>,
): Promise<ContainerMount[]> {
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]))
  const mounts: ContainerMount[] = []
  for (const m of container.volumeMounts ?? []) {
    const hostPath = volumeHostPaths.get(m.name)
    const volume = volumes.get(m.name)
    if (!hostPath || !volume) throw new PodConfigError(`volumeMount ${m.name}: no such volume`)
    if (m.subPathExpr)
      throw new PodConfigError(`volumeMount ${m.name}: subPathExpr is not supported by the dutil node agent`)
    let source = hostPath
    if (m.subPath) {
      source = safeJoin(hostPath, m.subPath)
      if (!(await exists(source))) await fs.mkdir(source, { recursive: true })
    }
    const stat = await fs.stat(source)
    mounts.push({
      source,
      target: m.mountPath,
      readOnly: (m.readOnly ?? false) || isApiDataVolume(volume),
      file: !stat.isDirectory(),
    })
  }
  return mounts
}
