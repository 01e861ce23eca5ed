import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { LABELS } from '../contract/api-group.js'
import { catalog } from '../runners/catalog.js'
import { runnerSettings } from '../test/support/runner-settings.js'
import { desiredJob } from './desired-job.js'
import { parseRunnerPods } from './runner-pod.js'

const uj = (utility: string): UtilityJobResource => ({
  apiVersion: 'dutil.io/v1alpha1',
  kind: 'UtilityJob',
  metadata: { name: 'job-01jq0000000000000000000000', namespace: 'dutil', uid: 'u-1' },
  spec: {
    jobId: 'job_01JQ0000000000000000000000',
    utility,
    mode: 'async',
    apiKeyId: 'key_x',
    apiKeyName: 'k',
    createdAt: '2026-03-01T00:00:00.000Z',
    inputKey: 'i',
    metadata: null,
  },
})
const credentials = { accessKey: 'ASIATEMP', secretKey: 's', sessionToken: 't', expiresAt: '2026-11-22T10:15:00.000Z' }

describe('runner pod templates (DUTIL_RUNNER_POD)', () => {
  const raw = JSON.stringify({
    default: {
      imagePullSecrets: ['registry-creds'],
      nodeSelector: { pool: 'documents' },
      tolerations: [{ key: 'documents', operator: 'Exists', effect: 'NoSchedule' }],
      labels: { team: 'docs' },
    },
    'html-pdf': {
      runtimeClassName: 'gvisor',
      nodeSelector: { pool: 'sandboxed' },
      annotations: { 'example.com/scan': 'true' },
      priorityClassName: 'batch-low',
    },
  })

  it("gives every runner the default, a runner's own fields replacing the default's", () => {
    const pods = parseRunnerPods(raw)
    expect(Object.keys(pods).sort()).toEqual([...catalog.keys()].sort())
    expect(pods['split-pdf']).toEqual({
      imagePullSecrets: ['registry-creds'],
      nodeSelector: { pool: 'documents' },
      tolerations: [{ key: 'documents', operator: 'Exists', effect: 'NoSchedule' }],
      labels: { team: 'docs' },
    })
    expect(pods['html-pdf']).toMatchObject({
      imagePullSecrets: ['registry-creds'],
      runtimeClassName: 'gvisor',
      nodeSelector: { pool: 'sandboxed' },
      priorityClassName: 'batch-low',
    })
  })

  it('puts them on the pod, keeping dutil own labels, security context and ServiceAccount', () => {
    const pods = parseRunnerPods(
      JSON.stringify({
        default: { labels: { team: 'docs', [LABELS.utility]: 'spoofed' }, imagePullSecrets: ['registry-creds'] },
        'html-pdf': { runtimeClassName: 'gvisor', annotations: { a: 'b' } },
      }),
    )
    const job = desiredJob(uj('html-pdf'), catalog.get('html-pdf')!, runnerSettings({ pods }), credentials)
    const template = job.spec!.template
    expect(template.spec).toMatchObject({
      imagePullSecrets: [{ name: 'registry-creds' }],
      runtimeClassName: 'gvisor',
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true },
    })
    expect(template.metadata!.labels).toMatchObject({ team: 'docs', [LABELS.utility]: 'html-pdf' })
    expect(template.metadata!.annotations).toEqual({ a: 'b' })
    // A pod deadline past the Job's own: the Job's ends the run; the pod's puts it in the quota's scope.
    expect(template.spec!.activeDeadlineSeconds).toBe(job.spec!.activeDeadlineSeconds! + 60)
    // Without a template nothing is added.
    const plain = desiredJob(uj('split-pdf'), catalog.get('split-pdf')!, runnerSettings(), credentials).spec!.template
    expect(plain.spec!.imagePullSecrets).toBeUndefined()
    expect(plain.metadata!.annotations).toBeUndefined()
  })

  it("puts a node's seccomp profile on the pod and turns Chromium's sandbox on for html-pdf alone", () => {
    const profile = { type: 'Localhost' as const, localhostProfile: 'dutil/chromium-sandbox-seccomp.json' }
    const pods = parseRunnerPods(JSON.stringify({ default: { browserSandbox: true, seccompProfile: profile } }))
    const html = desiredJob(uj('html-pdf'), catalog.get('html-pdf')!, runnerSettings({ pods }), credentials)
    const spec = html.spec!.template.spec!
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: profile })
    expect(spec.containers[0]!.env).toContainEqual({ name: 'DUTIL_CHROMIUM_SANDBOX', value: 'true' })
    // Every runner gets the default's profile; the sandbox only where a browser runs.
    const split = desiredJob(uj('split-pdf'), catalog.get('split-pdf')!, runnerSettings({ pods }), credentials)
    expect(split.spec!.template.spec!.securityContext!.seccompProfile).toEqual(profile)
    expect(split.spec!.template.spec!.containers[0]!.env!.map((e) => e.name)).not.toContain('DUTIL_CHROMIUM_SANDBOX')
    // Without a template: the runtime's default profile, Chromium without its sandbox.
    const plain = desiredJob(uj('html-pdf'), catalog.get('html-pdf')!, runnerSettings(), credentials).spec!.template
    expect(plain.spec!.securityContext!.seccompProfile).toEqual({ type: 'RuntimeDefault' })
    expect(plain.spec!.containers[0]!.env!.map((e) => e.name)).not.toContain('DUTIL_CHROMIUM_SANDBOX')
  })

  it('stops the operator at start naming what is wrong', () => {
    expect(() => parseRunnerPods('{')).toThrow('DUTIL_RUNNER_POD must be JSON')
    expect(() => parseRunnerPods('{"pdf-split": {}}')).toThrow('DUTIL_RUNNER_POD: pdf-split is not a utility')
    expect(() => parseRunnerPods('{"default": {"nodeSelector": {"a": 1}}}')).toThrow(
      /DUTIL_RUNNER_POD: default\/nodeSelector\/a must be string/,
    )
    expect(() => parseRunnerPods('{"default": {"serviceAccountName": "admin"}}')).toThrow(
      /must NOT have additional properties \(serviceAccountName\)/,
    )
    // The sandbox under the runtime's default profile could never start.
    expect(() => parseRunnerPods('{"html-pdf": {"browserSandbox": true}}')).toThrow(
      /html-pdf browserSandbox needs a seccompProfile of type Localhost/,
    )
    expect(() => parseRunnerPods('{"split-pdf": {"browserSandbox": true}}')).toThrow(/split-pdf runs no browser/)
    // A profile path the kubelet would refuse (absolute, or out of its directory).
    for (const path of ['/etc/profile.json', '../x.json', 'dutil/../../x.json']) {
      expect(() =>
        parseRunnerPods(JSON.stringify({ default: { seccompProfile: { type: 'Localhost', localhostProfile: path } } })),
      ).toThrow(/DUTIL_RUNNER_POD: default\/seccompProfile/)
    }
    expect(() => parseRunnerPods('{"default": {"seccompProfile": {"type": "Unconfined"}}}')).toThrow(
      /DUTIL_RUNNER_POD: default\/seccompProfile/,
    )
  })
})
