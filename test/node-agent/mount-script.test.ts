import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildMountScript, shellQuote } from './mount-script.js';

describe('shellQuote', () => {
  it('survives a round trip through sh', () => {
    const nasty = `it's "quoted" $(rm -rf /) \`x\` \\ end`;
    expect(execFileSync('/bin/sh', ['-c', `printf %s ${shellQuote(nasty)}`]).toString()).toBe(nasty);
  });
});

describe('buildMountScript', () => {
  it('mounts the image root first, parents before children, the termination log last', () => {
    const script = buildMountScript({
      imageRoot: '/repo',
      mounts: [
        { source: '/w/u/volumes/nested', target: '/etc/cfg/nested/', readOnly: true, file: false },
        { source: '/w/u/volumes/cfg', target: '/etc/cfg', readOnly: false, file: false },
        { source: '/w/u/volumes/cfg/one', target: '/etc/one.conf', readOnly: false, file: true },
      ],
      terminationLog: { source: '/w/u/main.termination-log', target: '/dev/termination-log' },
      workingDir: '/app/work dir',
    });
    expect(script.split('\n')).toEqual([
      'set -e',
      "mkdir -p '/app'",
      "mount --bind '/repo' '/app'",
      "mkdir -p '/etc/cfg'",
      "mount --bind '/w/u/volumes/cfg' '/etc/cfg'",
      "mkdir -p '/etc'",
      "[ -e '/etc/one.conf' ] || : > '/etc/one.conf'",
      "mount --bind '/w/u/volumes/cfg/one' '/etc/one.conf'",
      "mkdir -p '/etc/cfg/nested'",
      "mount --bind '/w/u/volumes/nested' '/etc/cfg/nested'",
      "mount -o remount,bind,ro '/etc/cfg/nested'",
      "mkdir -p '/dev'",
      "[ -e '/dev/termination-log' ] || : > '/dev/termination-log'",
      "mount --bind '/w/u/main.termination-log' '/dev/termination-log'",
      "cd '/app/work dir'",
      'exec "$@"',
    ]);
  });

  it('omits cd without a workingDir', () => {
    const script = buildMountScript({ imageRoot: '/r', mounts: [], terminationLog: { source: '/t', target: '/tl' } });
    expect(script).not.toContain('cd ');
    expect(script.endsWith('exec "$@"')).toBe(true);
  });
});
