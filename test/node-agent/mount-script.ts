// The shell script run by `unshare --mount --propagation private -- /bin/sh -c <script> sh <argv>`
// so that the pod spec's paths exist for the container: the image root on /app, every volume on
// its mountPath, the termination log file on terminationMessagePath, then `exec "$@"`.
// The mounts live only in the container's private mount namespace; mount points that do not exist
// yet are created on the host filesystem (there is no container root filesystem).
import path from 'node:path';
import type { ContainerMount } from './volumes.js';

export const IMAGE_MOUNT_PATH = '/app';

export interface MountScriptInput {
  imageRoot: string;
  mounts: readonly ContainerMount[];
  terminationLog: { source: string; target: string };
  workingDir?: string;
}

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function depth(p: string): number {
  return path.posix.normalize(p).split('/').filter(Boolean).length;
}

function normalizeTarget(p: string): string {
  const n = path.posix.normalize(p);
  return n.length > 1 ? n.replace(/\/+$/, '') : n;
}

function mountLines(m: ContainerMount): string[] {
  const target = normalizeTarget(m.target);
  const q = shellQuote(target);
  const lines = m.file
    ? [`mkdir -p ${shellQuote(path.posix.dirname(target))}`, `[ -e ${q} ] || : > ${q}`]
    : [`mkdir -p ${q}`];
  lines.push(`mount --bind ${shellQuote(m.source)} ${q}`);
  if (m.readOnly) lines.push(`mount -o remount,bind,ro ${q}`);
  return lines;
}

export function buildMountScript(input: MountScriptInput): string {
  const all: ContainerMount[] = [
    { source: input.imageRoot, target: IMAGE_MOUNT_PATH, readOnly: false, file: false },
    // Parents before children, like container runtimes sort mounts; stable for equal depth.
    ...[...input.mounts].sort((a, b) => depth(a.target) - depth(b.target)),
    { source: input.terminationLog.source, target: input.terminationLog.target, readOnly: false, file: true },
  ];
  const lines = ['set -e', ...all.flatMap(mountLines)];
  if (input.workingDir) lines.push(`cd ${shellQuote(input.workingDir)}`);
  lines.push('exec "$@"');
  return lines.join('\n');
}
