// The shell script run by `unshare --mount --propagation private -- /bin/bash -c <script> sh <argv>`
// so that the pod spec's paths exist for the container: the image root on /app, every volume on
// its mountPath, the termination log file on terminationMessagePath, then `exec "$@"`.
// The mounts live only in the container's private mount namespace; mount points that do not exist
// yet are created on the host filesystem (there is no container root filesystem).
//
// Every bind source is opened first, before any mount, and bound through /proc/self/fd: a volume
// mounted over /tmp (or /var, /home, ...) would otherwise hide the sources still to be bound when
// the node's state directory lies beneath it (a checkout under /tmp). runc binds the same way.
import path from 'node:path'
import type { ContainerMount } from './volumes.js'

export const IMAGE_MOUNT_PATH = '/app'

export interface MountScriptInput {
  imageRoot: string
  mounts: readonly ContainerMount[]
  terminationLog: { source: string; target: string }
  workingDir?: string
}

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

function depth(p: string): number {
  return path.posix.normalize(p).split('/').filter(Boolean).length
}

function normalizeTarget(p: string): string {
  const n = path.posix.normalize(p)
  return n.length > 1 ? n.replace(/\/+$/, '') : n
}

/** First descriptor a source is held open on (0-2 are the container's stdio). */
export const FIRST_SOURCE_FD = 10

function mountLines(m: ContainerMount, fd: number): string[] {
  const target = normalizeTarget(m.target)
  const q = shellQuote(target)
  const lines = m.file
    ? [`mkdir -p ${shellQuote(path.posix.dirname(target))}`, `[ -e ${q} ] || : > ${q}`]
    : [`mkdir -p ${q}`]
  // --no-canonicalize: mount(8) would otherwise resolve the descriptor back to its (hidden) path.
  lines.push(`mount --no-canonicalize --bind /proc/self/fd/${fd} ${q}`)
  if (m.readOnly) lines.push(`mount -o remount,bind,ro ${q}`)
  return lines
}

export function buildMountScript(input: MountScriptInput): string {
  const all: ContainerMount[] = [
    { source: input.imageRoot, target: IMAGE_MOUNT_PATH, readOnly: false, file: false },
    // Parents before children, like container runtimes sort mounts; stable for equal depth.
    ...[...input.mounts].sort((a, b) => depth(a.target) - depth(b.target)),
    { source: input.terminationLog.source, target: input.terminationLog.target, readOnly: false, file: true },
  ]
  const fds = all.map((_, i) => FIRST_SOURCE_FD + i)
  const lines = [
    'set -e',
    // Resolve every source while none is shadowed yet.
    ...all.map((m, i) => `exec ${fds[i]}<${shellQuote(m.source)}`),
    ...all.flatMap((m, i) => mountLines(m, fds[i])),
    // The container inherits none of them.
    `exec ${fds.map((fd) => `${fd}<&-`).join(' ')}`,
  ]
  if (input.workingDir) lines.push(`cd ${shellQuote(input.workingDir)}`)
  lines.push('exec "$@"')
  return lines.join('\n')
}
