import type { V1Container, V1Pod } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import { PodConfigError } from './config-error.js'
import { expand, expandCommand, fieldRefValue, mappingFor, resolveContainerEnv, serviceEnvFor } from './env-resolver.js'
import type { PodObjects } from './pod-objects.js'

const pod: V1Pod = {
  metadata: { name: 'p1', namespace: 'ns1', uid: 'u-1', labels: { b: '2', a: '1' }, annotations: { note: 'x"y' } },
  spec: { nodeName: 'node-a', serviceAccountName: 'sa', containers: [] },
}

function objects(): PodObjects {
  return {
    secrets: new Map([
      ['creds', { data: { user: Buffer.from('alice'), token: Buffer.from('s3cr3t') } }],
      ['gone', null],
    ]),
    configMaps: new Map([
      ['settings', { data: { MODE: 'fast', LEVEL: '3' }, binaryData: {} }],
      ['nocm', null],
    ]),
  }
}

const noService = new Map<string, string>()

describe('expand', () => {
  const m = mappingFor(
    new Map([
      ['A', 'x'],
      ['EMPTY', ''],
    ]),
  )
  it.each([
    ['$(A)', 'x'],
    ['pre-$(A)-post', 'pre-x-post'],
    ['$(MISSING)', '$(MISSING)'],
    ['$$(A)', '$(A)'],
    ['$$', '$'],
    ['$$$(A)', '$x'],
    ['$(A', '$(A'],
    ['$A', '$A'],
    ['trailing $', 'trailing $'],
    ['$(EMPTY)|', '|'],
    ['$()', '$()'],
    ['é$(A)é', 'éxé'],
  ])('%s -> %s', (input, want) => {
    expect(expand(input, m)).toBe(want)
  })
})

describe('resolveContainerEnv', () => {
  it('expands $(VAR) against earlier variables only, in declaration order', () => {
    const c: V1Container = {
      name: 'c',
      env: [
        { name: 'LATER_REF', value: '$(B)' },
        { name: 'A', value: 'one' },
        { name: 'B', value: '$(A)-two' },
        { name: 'C', value: '$(B)/$(SVC)/$(NOPE)/$$(A)' },
        { name: 'EMPTY', value: '' },
      ],
    }
    const env = resolveContainerEnv(pod, c, objects(), new Map([['SVC', 's']]))
    expect(Object.fromEntries(env)).toEqual({
      LATER_REF: '$(B)',
      A: 'one',
      B: 'one-two',
      C: 'one-two/s/$(NOPE)/$(A)',
      EMPTY: '',
      SVC: 's',
    })
  })

  it('resolves secretKeyRef, configMapKeyRef and fieldRef', () => {
    const c: V1Container = {
      name: 'c',
      env: [
        { name: 'USER', valueFrom: { secretKeyRef: { name: 'creds', key: 'user' } } },
        { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'settings', key: 'MODE' } } },
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
        { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'LBL', valueFrom: { fieldRef: { fieldPath: "metadata.labels['a']" } } },
        { name: 'GREETING', value: 'hi $(USER) in $(NS)' },
      ],
    }
    expect(Object.fromEntries(resolveContainerEnv(pod, c, objects(), noService))).toEqual({
      USER: 'alice',
      MODE: 'fast',
      POD: 'p1',
      NS: 'ns1',
      UID: 'u-1',
      NODE: 'node-a',
      IP: '127.0.0.1',
      LBL: '1',
      GREETING: 'hi alice in ns1',
    })
  })

  it('skips optional references to missing objects or keys', () => {
    const c: V1Container = {
      name: 'c',
      envFrom: [{ secretRef: { name: 'gone', optional: true } }, { configMapRef: { name: 'nocm', optional: true } }],
      env: [
        { name: 'S1', valueFrom: { secretKeyRef: { name: 'gone', key: 'k', optional: true } } },
        { name: 'S2', valueFrom: { secretKeyRef: { name: 'creds', key: 'nokey', optional: true } } },
        { name: 'C1', valueFrom: { configMapKeyRef: { name: 'nocm', key: 'k', optional: true } } },
        { name: 'C2', valueFrom: { configMapKeyRef: { name: 'settings', key: 'nokey', optional: true } } },
        { name: 'KEPT', value: 'yes' },
      ],
    }
    expect(Object.fromEntries(resolveContainerEnv(pod, c, objects(), noService))).toEqual({ KEPT: 'yes' })
  })

  it.each([
    [{ secretKeyRef: { name: 'gone', key: 'k' } }, 'secret "gone" not found'],
    [{ secretKeyRef: { name: 'creds', key: 'nokey' } }, "couldn't find key nokey in Secret ns1/creds"],
    [{ configMapKeyRef: { name: 'nocm', key: 'k' } }, 'configmap "nocm" not found'],
    [{ configMapKeyRef: { name: 'settings', key: 'nokey' } }, "couldn't find key nokey in ConfigMap ns1/settings"],
  ])('fails a non-optional reference %# with CreateContainerConfigError', (valueFrom, message) => {
    const c: V1Container = { name: 'c', env: [{ name: 'X', valueFrom }] }
    let caught: unknown
    try {
      resolveContainerEnv(pod, c, objects(), noService)
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(PodConfigError)
    expect((caught as PodConfigError).message).toBe(message)
    expect((caught as PodConfigError).reason).toBe('CreateContainerConfigError')
  })

  it('applies envFrom first with prefixes, then lets env override it', () => {
    const c: V1Container = {
      name: 'c',
      envFrom: [{ configMapRef: { name: 'settings' } }, { secretRef: { name: 'creds' }, prefix: 'DB_' }],
      env: [
        { name: 'MODE', value: 'slow-$(LEVEL)' },
        { name: 'DSN', value: '$(DB_user):$(DB_token)' },
      ],
    }
    expect(Object.fromEntries(resolveContainerEnv(pod, c, objects(), noService))).toEqual({
      MODE: 'slow-3',
      LEVEL: '3',
      DB_user: 'alice',
      DB_token: 's3cr3t',
      DSN: 'alice:s3cr3t',
    })
  })

  it('lets declared variables win over service variables', () => {
    const c: V1Container = { name: 'c', env: [{ name: 'KUBERNETES_SERVICE_HOST', value: 'override' }] }
    const env = resolveContainerEnv(pod, c, objects(), serviceEnvFor('https://127.0.0.1:16443'))
    expect(env.get('KUBERNETES_SERVICE_HOST')).toBe('override')
    expect(env.get('KUBERNETES_SERVICE_PORT')).toBe('16443')
  })
})

describe('fieldRefValue', () => {
  it('formats whole label and annotation maps like kubelet', () => {
    expect(fieldRefValue(pod, 'metadata.labels')).toBe('a="1"\nb="2"')
    expect(fieldRefValue(pod, 'metadata.annotations')).toBe('note="x\\"y"')
    expect(fieldRefValue(pod, "metadata.annotations['absent']")).toBe('')
  })
  it('rejects unknown field paths', () => {
    expect(() => fieldRefValue(pod, 'spec.nope')).toThrow(PodConfigError)
  })
})

describe('expandCommand', () => {
  it('expands command and args with the final environment', () => {
    expect(expandCommand(['echo', '$(MSG)', '$$(MSG)', '$(UNSET)'], new Map([['MSG', 'hi']]))).toEqual([
      'echo',
      'hi',
      '$(MSG)',
      '$(UNSET)',
    ])
  })
})
