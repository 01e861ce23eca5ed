import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { V1Pod } from '@kubernetes/client-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PodConfigError } from './config-error.js'
import type { PodObjects } from './pod-objects.js'
import { collectReferences } from './pod-objects.js'
import { containerMounts, materializeVolumes, planVolume, safeJoin } from './volumes.js'

const objects: PodObjects = {
  secrets: new Map([
    ['creds', { data: { user: Buffer.from('alice'), token: Buffer.from('s3cr3t') } }],
    ['missing', null],
  ]),
  configMaps: new Map([
    ['settings', { data: { 'app.yaml': 'mode: fast\n' }, binaryData: { 'blob.bin': Buffer.from([0, 1, 2]) } }],
    ['nocm', null],
  ]),
}

const pod: V1Pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'u-1', labels: { app: 'x' } },
  spec: {
    containers: [
      {
        name: 'main',
        env: [{ name: 'T', valueFrom: { secretKeyRef: { name: 'envsecret', key: 'k' } } }],
        envFrom: [{ configMapRef: { name: 'envcm' } }],
        volumeMounts: [
          { name: 'creds', mountPath: '/var/run/creds' },
          { name: 'scratch', mountPath: '/scratch' },
          { name: 'scratch', mountPath: '/scratch-sub', subPath: 'sub/dir' },
        ],
      },
    ],
    volumes: [
      { name: 'creds', secret: { secretName: 'creds' } },
      { name: 'scratch', emptyDir: {} },
      {
        name: 'cfg',
        configMap: { name: 'settings', items: [{ key: 'app.yaml', path: 'conf/app.yaml', mode: 0o600 }] },
      },
      {
        name: 'proj',
        projected: {
          sources: [
            { serviceAccountToken: { path: 'token', expirationSeconds: 600 } },
            { configMap: { name: 'settings', items: [{ key: 'blob.bin', path: 'blob.bin' }] } },
            { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
          ],
        },
      },
    ],
  },
}

describe('collectReferences', () => {
  it('finds secrets and config maps used by env, envFrom and volumes', () => {
    const refs = collectReferences(pod)
    expect([...refs.secrets].sort()).toEqual(['creds', 'envsecret'])
    expect([...refs.configMaps].sort()).toEqual(['envcm', 'settings'])
  })
})

describe('planVolume', () => {
  it('writes every secret key, or only the listed items', () => {
    const all = planVolume(pod, { name: 'v', secret: { secretName: 'creds', defaultMode: 0o400 } }, objects)
    expect(all).toMatchObject({ kind: 'files' })
    if (all.kind !== 'files') throw new Error('unreachable')
    expect(all.files.map((f) => [f.path, f.mode, f.content.toString()])).toEqual([
      ['user', 0o400, 'alice'],
      ['token', 0o400, 's3cr3t'],
    ])
    const some = planVolume(
      pod,
      { name: 'v', secret: { secretName: 'creds', items: [{ key: 'token', path: 'a/t' }] } },
      objects,
    )
    if (some.kind !== 'files') throw new Error('unreachable')
    expect(some.files.map((f) => f.path)).toEqual(['a/t'])
  })

  it('honours optional for missing objects and keys, otherwise keeps the pod ContainerCreating', () => {
    const opt = planVolume(pod, { name: 'v', secret: { secretName: 'missing', optional: true } }, objects)
    expect(opt).toEqual({ name: 'v', kind: 'files', files: [], tokens: [] })
    const optKey = planVolume(
      pod,
      { name: 'v', configMap: { name: 'settings', optional: true, items: [{ key: 'nope', path: 'x' }] } },
      objects,
    )
    expect(optKey).toEqual({ name: 'v', kind: 'files', files: [], tokens: [] })
    const fail = () => planVolume(pod, { name: 'v', secret: { secretName: 'missing' } }, objects)
    expect(fail).toThrow(PodConfigError)
    expect(fail).toThrow('secret "missing" not found')
    expect(() =>
      planVolume(pod, { name: 'v', configMap: { name: 'settings', items: [{ key: 'nope', path: 'x' }] } }, objects),
    ).toThrow('configmap references non-existent config key: nope')
  })

  it('rejects volume types it cannot provide', () => {
    expect(() => planVolume(pod, { name: 'v', persistentVolumeClaim: { claimName: 'c' } }, objects)).toThrow(
      'type persistentVolumeClaim is not supported',
    )
  })
})

describe('materializeVolumes and containerMounts', () => {
  let dir: string
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vol-'))
  })
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true })
  })

  it('writes the files, requests tokens, and resolves mounts (API data read-only)', async () => {
    const plans = (pod.spec?.volumes ?? []).map((v) => planVolume(pod, v, objects))
    const tokens: Array<[string | undefined, number]> = []
    const paths = await materializeVolumes(dir, plans, async (aud, secs) => {
      tokens.push([aud, secs])
      return 'jwt-token'
    })
    expect(tokens).toEqual([[undefined, 600]])
    const creds = paths.get('creds')!
    expect(await fs.readFile(path.join(creds, 'user'), 'utf8')).toBe('alice')
    const cfgFile = path.join(paths.get('cfg')!, 'conf/app.yaml')
    expect(await fs.readFile(cfgFile, 'utf8')).toBe('mode: fast\n')
    expect((await fs.stat(cfgFile)).mode & 0o777).toBe(0o600)
    const proj = paths.get('proj')!
    expect(await fs.readFile(path.join(proj, 'token'), 'utf8')).toBe('jwt-token')
    expect([...(await fs.readFile(path.join(proj, 'blob.bin')))]).toEqual([0, 1, 2])
    expect(await fs.readFile(path.join(proj, 'namespace'), 'utf8')).toBe('ns')
    expect(await fs.readdir(paths.get('scratch')!)).toEqual([])

    const mounts = await containerMounts(pod, pod.spec!.containers[0], paths)
    expect(mounts).toEqual([
      { source: creds, target: '/var/run/creds', readOnly: true, file: false },
      { source: paths.get('scratch'), target: '/scratch', readOnly: false, file: false },
      { source: path.join(paths.get('scratch')!, 'sub/dir'), target: '/scratch-sub', readOnly: false, file: false },
    ])
  })

  it('refuses paths that escape the volume', () => {
    expect(() => safeJoin('/w/v', '../etc/passwd')).toThrow(PodConfigError)
    expect(safeJoin('/w/v', 'a/b')).toBe('/w/v/a/b')
  })
})
