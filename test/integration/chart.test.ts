import { writeConfig } from '../../cli/config-file.js'
import { LOOPBACK_RANGES, REFUSED_RANGES } from '../../contract/address-policy.js'
import { SECRET_OBJECTS } from '../../platform/secret-entries.js'
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import https from 'node:https'
import {
  CoreV1Api,
  CustomObjectsApi,
  FlowcontrolApiserverV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest'
import { parseAllDocuments, stringify } from 'yaml'
import { API_GROUP, API_KEY, API_VERSION, UTILITY_JOB } from '../../contract/api-group.js'
import { objectNameOf } from '../../contract/ids.js'
import { SEALED_INPUTS_ENTRY } from '../../platform/input-sealing-key.js'
import { catalog } from '../../runners/catalog.js'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { apiStatus } from '../../platform/kube.js'
import { desiredJob } from '../../operator/desired-job.js'
import { parseRunnerPools } from '../../operator/config.js'
import { desiredPoolPod } from '../../operator/pool-pod.js'
import { tenantBinding } from '../../operator/runner-pools.js'
import { parseRunnerPods } from '../../operator/runner-pod.js'
import { runnerSettings } from '../support/runner-settings.js'
import { operatorMetrics } from '../../operator/metrics.js'
import { gatewayMetrics } from '../../gateway/metrics.js'
import { BIN_DIR, REPO_ROOT } from '../platform/platform.js'
import { until } from '../platform/wait-for.js'
import { CallbackReceiver } from '../support/callback-receiver.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { api } from './helpers/api.js'
import { createDatabase } from './helpers/database.js'
import { kubeConfig } from './helpers/keys.js'
import { whileCordoned } from './helpers/node.js'
import { firstKeyCommand } from '../support/chart-notes.js'
import { fileScratch } from '../support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratchRoot = fileScratch('dutil-test-chart-')

/**
 * The Helm chart (charts/dutil): linted, rendered and checked, applied with a server-side dry
 * run, then installed for real on the local platform. The node agent runs the chart's gateway and
 * operator pods with the tokens of the chart's ServiceAccounts (no admin credentials), in a
 * namespace that enforces the restricted Pod Security Standard, and they do their whole job.
 */
const CHART = join(REPO_ROOT, 'charts', 'dutil')
const LINT_VALUES = join(CHART, 'ci', 'lint-values.yaml')
const NS = 'dutil-chart'
const RELEASE = 'dutil' // full name "dutil": ServiceAccounts dutil-gateway, dutil-operator, dutil-keys

const kubeconfig = () => inject('kubeconfigPath')
const helm = (...args: string[]) =>
  execFileSync(join(BIN_DIR, 'helm'), ['--kubeconfig', kubeconfig(), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
const kubectl = (args: string[], input?: string) =>
  execFileSync(join(BIN_DIR, 'kubectl'), ['--kubeconfig', kubeconfig(), ...args], {
    encoding: 'utf8',
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
  })

type Manifest = {
  apiVersion: string
  kind: string
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }
  [k: string]: any
}
const parsed = (yaml: string): Manifest[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS())
    .filter(Boolean)
/** The chart with external services (the lint values) and `args`. */
function render(...args: string[]): Manifest[] {
  return parsed(helm('template', RELEASE, CHART, '--namespace', NS, '-f', LINT_VALUES, ...args))
}
/** The chart with no values but `args`: a trial. */
const renderTrial = (...args: string[]): Manifest[] =>
  parsed(helm('template', RELEASE, CHART, '--namespace', NS, ...args))
/** `kubectl apply --server-side --dry-run=server` of `yaml` into `ns`. */
const serverDryRun = (ns: string, yaml: string) =>
  spawnSync(
    join(BIN_DIR, 'kubectl'),
    ['--kubeconfig', kubeconfig(), 'apply', '--server-side', '--dry-run=server', '-n', ns, '-f', '-'],
    { input: yaml, encoding: 'utf8' },
  )
const byKind = (docs: Manifest[], kind: string) => docs.filter((d) => d.kind === kind)
const named = (docs: Manifest[], kind: string, name: string) =>
  docs.find((d) => d.kind === kind && d.metadata.name === name)!

describe('helm lint and template', () => {
  it('lints clean (strict) with no values (a trial) and with external services, and names what external services lack', () => {
    expect(helm('lint', CHART, '--strict', '-f', LINT_VALUES)).toContain('0 chart(s) failed')
    expect(helm('lint', CHART, '--strict')).toContain('0 chart(s) failed')
    const bare = spawnSync(
      join(BIN_DIR, 'helm'),
      ['lint', CHART, '--strict', '--set', 'storage.type=external', '--set', 'database.type=external'],
      { encoding: 'utf8' },
    )
    expect(bare.status).not.toBe(0)
    expect(bare.stdout + bare.stderr).toMatch(/storage\/endpoint/)
    expect(bare.stdout + bare.stderr).toMatch(/storage\/existingSecret/)
    expect(bare.stdout + bare.stderr).toMatch(/database\/existingSecret/)
  })

  it('renders the four CRDs as templates (so upgrades apply them), kept at uninstall; none with crds.install false', () => {
    const crds = byKind(render(), 'CustomResourceDefinition')
    expect(crds.map((c) => c.metadata.name).sort()).toEqual([
      'apikeys.dutil.io',
      'consoleinvites.dutil.io',
      'consoleusers.dutil.io',
      'utilityjobs.dutil.io',
    ])
    for (const crd of crds) {
      expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep')
      expect(crd.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('Helm')
      // The same schema as crds/ (what `kubectl apply -f crds/` installs).
      const [plain] = parseAllDocuments(
        readFileSync(join(REPO_ROOT, 'crds', `${crd.metadata.name.split('.')[0]}.yaml`), 'utf8'),
      ).map((d) => d.toJS())
      expect(crd.spec).toEqual(plain.spec)
    }
    expect(
      byKind(render('--set', 'crds.keep=false'), 'CustomResourceDefinition')[0].metadata.annotations,
    ).toBeUndefined()
    expect(byKind(render('--set', 'crds.install=false'), 'CustomResourceDefinition')).toEqual([])
  })

  it('renders a trial with no values: MinIO, PostgreSQL and Redis inside the release, wired to the programs', () => {
    const docs = renderTrial()
    expect(
      byKind(docs, 'StatefulSet')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(['dutil-minio', 'dutil-postgresql', 'dutil-redis'])
    const secret = named(docs, 'Secret', 'dutil-internal')
    expect(secret.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep')
    const data = Object.fromEntries(
      Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
    )
    expect(data.url).toBe(`postgres://dutil:${data['postgres-password']}@dutil-postgresql:5432/dutil`)
    expect(data['redis-url']).toBe(`redis://:${data['redis-password']}@dutil-redis:6379/0`)
    for (const k of ['accessKey', 'secretKey', 'postgres-password', 'redis-password'])
      expect(data[k]).toMatch(/^\w{32}$/)
    const env = (deployment: string) =>
      Object.fromEntries(
        named(docs, 'Deployment', deployment).spec.template.spec.containers[0].env.map((e: any) => [
          e.name,
          e.value ?? `${e.valueFrom?.secretKeyRef?.name}/${e.valueFrom?.secretKeyRef?.key}`,
        ]),
      )
    const gateway = env('dutil-gateway')
    expect(gateway.DUTIL_S3_ENDPOINT).toBe('http://dutil-minio:9000')
    expect(gateway.DUTIL_S3_PUBLIC_ENDPOINT).toBe('http://127.0.0.1:8082')
    expect(gateway.DUTIL_S3_ACCESS_KEY).toBe('dutil-internal/accessKey')
    expect(gateway.DUTIL_DATABASE_URL).toBe('dutil-internal/url')
    expect(gateway.DUTIL_REDIS_URL).toBe('dutil-internal/redis-url')
    expect(gateway.DUTIL_FILES_PORT).toBe('8082')
    expect(gateway.DUTIL_PUBLIC_URL).toBe('http://127.0.0.1:8080') // the console, through the NOTES' port-forward
    expect(env('dutil-operator').DUTIL_S3_CREATE_BUCKET).toBe('true')
    // Runners reach the internal MinIO (and nothing else private); only dutil's pods reach each service.
    const runners = named(docs, 'NetworkPolicy', 'dutil-runners')
    expect(runners.spec.egress).toContainEqual({
      to: [{ podSelector: { matchLabels: expect.objectContaining({ 'app.kubernetes.io/component': 'minio' }) } }],
      ports: [{ protocol: 'TCP', port: 9000 }],
    })
    const postgres = named(docs, 'NetworkPolicy', 'dutil-postgresql')
    expect(
      postgres.spec.ingress[0].from.map((f: any) => f.podSelector.matchLabels['app.kubernetes.io/component']),
    ).toEqual(['gateway', 'operator'])
    // Every internal service passes the restricted Pod Security Standard's fields.
    for (const sts of byKind(docs, 'StatefulSet')) {
      expect(sts.spec.template.spec.securityContext.runAsNonRoot).toBe(true)
      expect(sts.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem).toBe(true)
    }
    // Throw-away trials: no claims at all.
    const ephemeral = renderTrial(
      '--set',
      'storage.internal.persistence.enabled=false',
      '--set',
      'database.internal.persistence.enabled=false',
      '--set',
      'redis.internal.persistence.enabled=false',
    )
    for (const sts of byKind(ephemeral, 'StatefulSet')) expect(sts.spec.volumeClaimTemplates).toBeUndefined()
    // The internal MinIO lets in job mode's runner pods and, with a pooled utility, pool pods.
    const minioFrom = (d: any[]) =>
      named(d, 'NetworkPolicy', 'dutil-minio').spec.ingress[0].from.map((f: any) => f.podSelector.matchExpressions)
    expect(minioFrom(docs)).toContainEqual([{ key: 'dutil.io/job-id', operator: 'Exists' }])
    expect(minioFrom(docs)).not.toContainEqual([{ key: 'dutil.io/pool', operator: 'Exists' }])
    expect(minioFrom(renderTrial('--set', 'runners.zip-files.mode=pool'))).toContainEqual([
      { key: 'dutil.io/pool', operator: 'Exists' },
    ])
  })

  it('grants each program exactly the RBAC it needs, namespaced, without wildcards', () => {
    const docs = render()
    expect(byKind(docs, 'ClusterRole')).toEqual([])
    expect(byKind(docs, 'ClusterRoleBinding')).toEqual([])
    for (const role of byKind(docs, 'Role')) {
      for (const rule of role.rules)
        for (const field of ['apiGroups', 'resources', 'verbs'])
          expect(rule[field], `${role.metadata.name} ${field}`).not.toContain('*')
    }
    const rules = (name: string) =>
      named(docs, 'Role', name).rules.map(
        (r: any) =>
          `${r.apiGroups.join(',')}/${r.resources.join(',')}${r.resourceNames ? `[${r.resourceNames}]` : ''}: ${r.verbs.join(',')}`,
      )
    expect(rules('dutil-gateway')).toEqual([
      'dutil.io/utilityjobs: get,list,watch,create,patch',
      'dutil.io/apikeys: get,list,watch,create,patch',
      'dutil.io/apikeys/status: patch',
      'dutil.io/consoleusers,consoleinvites: get,list,watch,create,patch,delete',
      '/secrets: create',
      '/secrets[dutil-signing-secrets,dutil-console-credentials]: get,update,patch',
    ])
    expect(rules('dutil-operator')).toEqual([
      'dutil.io/utilityjobs: get,list,watch,patch,delete',
      'dutil.io/utilityjobs/status: update',
      'batch/jobs: get,list,watch,create,delete',
      '/pods: get,list,watch',
      '/secrets[dutil-signing-secrets]: get,patch',
      'dutil.io/apikeys: get,list,watch,delete',
      'coordination.k8s.io/leases: create',
      'coordination.k8s.io/leases[dutil-operator]: get,update',
      'events.k8s.io/events: create',
    ])
    expect(rules('dutil-key-admin')).toEqual([
      'dutil.io/apikeys: get,list,create,patch',
      '/secrets: create',
      '/secrets[dutil-signing-secrets]: get,update,patch',
    ])
    for (const sa of byKind(docs, 'ServiceAccount')) expect(sa.automountServiceAccountToken).toBe(false)
    // The lease the operator is told to use is the one it may update.
    const operatorEnv = named(docs, 'Deployment', 'dutil-operator').spec.template.spec.containers[0].env
    expect(operatorEnv.find((e: any) => e.name === 'DUTIL_LEASE_NAME').value).toBe('dutil-operator')
  })

  it('runs both programs restricted: non-root, read-only root file system, no capabilities, RuntimeDefault seccomp, with probes', () => {
    const docs = render()
    for (const name of ['dutil-gateway', 'dutil-operator']) {
      const pod = named(docs, 'Deployment', name).spec.template.spec
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } })
      expect(pod.serviceAccountName).toBe(name)
      const [c] = pod.containers
      expect(c.image).toBe(`ghcr.io/dutil/${name}:0.1.0`)
      expect(c.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      })
      expect(c.readinessProbe.httpGet.path).toBe('/readyz')
      expect(c.livenessProbe.httpGet.path).toBe('/healthz')
    }
    expect(named(docs, 'Deployment', 'dutil-operator').spec.replicas).toBe(2)
    expect(
      byKind(docs, 'PodDisruptionBudget')
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(['dutil-gateway', 'dutil-operator'])
  })

  it("isolates runner pods: the NetworkPolicy selects the operator's runner pods, admits nothing and lets out DNS and public addresses only", () => {
    const docs = render()
    const [policy] = byKind(docs, 'NetworkPolicy')
    const uj = {
      apiVersion: 'dutil.io/v1alpha1',
      kind: 'UtilityJob',
      metadata: { name: 'job-x', namespace: NS, uid: 'u' },
      spec: { jobId: 'job_X', utility: 'split-pdf', createdAt: '2026-01-01T00:00:00.000Z' },
    } as unknown as UtilityJobResource
    const runnerLabels = desiredJob(
      uj,
      catalog.get('split-pdf')!,
      {
        imageRegistry: 'r',
        imageTag: 't',
        storage: { endpoint: 'http://s', region: 'r', bucket: 'b' },
        allowLoopbackUrls: false,
        jobTtlSeconds: 1,
      },
      {
        accessKey: 'ASIATEMP',
        secretKey: 'temp-secret',
        sessionToken: 'temp-token',
        expiresAt: '2026-11-22T10:15:00.000Z',
      },
    ).spec!.template.metadata!.labels!
    for (const [k, v] of Object.entries(policy.spec.podSelector.matchLabels)) expect(runnerLabels[k]).toBe(v)
    for (const e of policy.spec.podSelector.matchExpressions) expect(runnerLabels[e.key]).toBeDefined()
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress'])
    expect(policy.spec.ingress).toEqual([])
    const publicRule = policy.spec.egress.find((r: any) => r.to.some((t: any) => t.ipBlock?.cidr === '0.0.0.0/0'))
    // Exactly the ranges the runner's own address policy refuses, plus loopback (IPv6 private, NAT64, 6to4, Teredo included).
    const cidrs = (ranges: ReadonlyArray<readonly [string, number]>) =>
      ranges.map(([net, bits]) => `${net}/${bits}`).sort()
    // ... and the cluster's own pod and Service ranges (clusterNetworks: kubeadm's by default).
    expect([...publicRule.to[0].ipBlock.except].sort()).toEqual(
      [...cidrs([...REFUSED_RANGES.ipv4, ...LOOPBACK_RANGES.ipv4]), '10.244.0.0/16', '10.96.0.0/12'].sort(),
    )
    expect([...publicRule.to[1].ipBlock.except].sort()).toEqual(
      [...cidrs([...REFUSED_RANGES.ipv6, ...LOOPBACK_RANGES.ipv6]), 'fd00:10:244::/56', 'fd00:10:96::/112'].sort(),
    )
    const operatorEnv = named(docs, 'Deployment', 'dutil-operator').spec.template.spec.containers[0].env
    expect(operatorEnv.find((e: any) => e.name === 'DUTIL_CLUSTER_NETWORKS').value).toBe(
      '10.244.0.0/16,fd00:10:244::/56,10.96.0.0/12,fd00:10:96::/112',
    )
    // A cluster whose pods have global IPv6 addresses names them: refused by the policy too.
    const global = render('--set-json', 'clusterNetworks={"pods":["2001:db9:10::/56"],"services":[]}')
    const globalRule = named(global, 'NetworkPolicy', policy.metadata.name).spec.egress.find((r: any) =>
      r.to.some((t: any) => t.ipBlock?.cidr === '0.0.0.0/0'),
    )
    expect(globalRule.to[1].ipBlock.except).toContain('2001:db9:10::/56')
    const dnsRule = policy.spec.egress.find((r: any) => r.ports?.some((p: any) => p.port === 53))
    expect(dnsRule.ports).toEqual([
      { protocol: 'UDP', port: 53 },
      { protocol: 'TCP', port: 53 },
    ])
  })

  it('uses a trial Secret of your own when named (GitOps renders without lookup): none is made, every reference names it', () => {
    const docs = render(
      '--set',
      'storage.type=internal',
      '--set',
      'database.type=internal',
      '--set',
      'redis.type=internal',
      '--set',
      'trialExistingSecret=my-trial',
    )
    expect(byKind(docs, 'Secret').map((s) => s.metadata.name)).not.toContain('dutil-internal')
    const text = JSON.stringify(docs)
    expect(text).not.toContain('dutil-internal')
    expect(text).toContain('"name":"my-trial"')
  })

  it('passes the upload quotas and expiry to the gateway, and lets the ingress take a 1 GB upload', () => {
    const docs = render(
      '--set',
      'gateway.uploads.maxBytesPerKey=5368709120',
      '--set',
      'gateway.ingress.enabled=true',
      '--set',
      'gateway.ingress.host=api.example.com',
    )
    const env = Object.fromEntries(
      named(docs, 'Deployment', 'dutil-gateway').spec.template.spec.containers[0].env.map((e: any) => [
        e.name,
        e.value,
      ]),
    )
    expect(env).toMatchObject({
      DUTIL_UPLOAD_MAX_FILES_PER_KEY: '1000',
      DUTIL_UPLOAD_MAX_BYTES_PER_KEY: '5368709120',
      DUTIL_UPLOAD_DEFAULT_EXPIRY_SECONDS: '86400',
      DUTIL_UPLOAD_MAX_EXPIRY_SECONDS: '604800',
    })
    expect(byKind(docs, 'Ingress')[0].metadata.annotations!['nginx.ingress.kubernetes.io/proxy-body-size']).toBe(
      '1024m',
    )
    expect(() => render('--set', 'gateway.uploads.maxFilesPerKey=0')).toThrow(/maxFilesPerKey/)
  })

  it('runs a utility in pool mode only when asked: the operator may then make, label and delete pods, the admission policy holds pool pods to runner pods and their tenant, and only the operator reaches them', () => {
    const off = render()
    expect(byKind(off, 'ValidatingAdmissionPolicy').map((p) => p.metadata.name)).not.toContainEqual(
      expect.stringContaining('pool-pods'),
    )
    const docs = render(
      '--set',
      'runners.html-pdf.mode=pool',
      '--set',
      'runners.html-pdf.pool.size=3',
      '--set',
      'runners.xls-to-xlsx.mode=pool',
    )
    const env = named(docs, 'Deployment', 'dutil-operator').spec.template.spec.containers[0].env
    expect(parseRunnerPools(env.find((e: any) => e.name === 'DUTIL_RUNNER_POOLS').value)).toEqual({
      'html-pdf': { size: 3, spare: 1, restartEvery: 100, idleSeconds: 300 },
      'xls-to-xlsx': { size: 2, spare: 1, restartEvery: 100, idleSeconds: 300 },
    })
    const podRules = named(docs, 'Role', 'dutil-operator')
      .rules.filter((r: any) => r.resources.includes('pods'))
      .map((r: any) => r.verbs.join(','))
    expect(podRules).toEqual(['get,list,watch', 'create,delete,patch'])
    // The pool pods' admission policy checks the pod spec itself, as the Job policy checks the template.
    const policy = named(docs, 'ValidatingAdmissionPolicy', `dutil-${NS}-runner-pool-pods`)
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods'] },
    ])
    expect(policy.spec.variables[0].expression).toMatch(/^object\.spec\.containers/)
    const jobs = named(docs, 'ValidatingAdmissionPolicy', `dutil-${NS}-runner-jobs`)
    // The same rules, and two more: a pool pod's tenant label, once set, never changes, and no
    // other label changes at all.
    expect(policy.spec.validations.length).toBe(jobs.spec.validations.length + 2)
    expect(policy.spec.validations.slice(-2).map((v: any) => v.message)).toEqual([
      'a pool pod serves the tenant of its first job for its whole life',
      'a pool pod keeps its labels (only its tenant is added, once)',
    ])
    // Pool pods: the runners' egress, and ingress from the operator on the hand-over port alone.
    const runners = named(docs, 'NetworkPolicy', 'dutil-runners')
    const pool = named(docs, 'NetworkPolicy', 'dutil-pool')
    expect(pool.spec.egress).toEqual(runners.spec.egress)
    expect(pool.spec.podSelector.matchExpressions).toEqual([{ key: 'dutil.io/pool', operator: 'Exists' }])
    expect(pool.spec.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: named(docs, 'Deployment', 'dutil-operator').spec.selector.matchLabels } }],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
    ])
    expect(() => render('--set', 'runners.html-pdf.mode=warm')).toThrow(/mode/)
    expect(() => render('--set', 'runners.split-pdf.pool.browsers=2')).toThrow(/browsers/)
  })

  it("passes per-utility runner resources, retention and images to the operator; routes /v1 (and /console unless turned off, Gotenberg's routes when turned on) through the optional Ingress", () => {
    const docs = render(
      '--set-json',
      'runners.split-pdf.resources={"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"2","memory":"3Gi"}}',
      '--set',
      'runners.html-pdf.concurrency=2',
      '--set',
      'retentionDays=30',
      '--set',
      'image.registry=registry.example.com/dutil',
      '--set',
      'image.tag=1.2.3',
      '--set',
      'gateway.ingress.enabled=true',
      '--set',
      'gateway.ingress.host=api.example.com',
    )
    const env = Object.fromEntries(
      named(docs, 'Deployment', 'dutil-operator').spec.template.spec.containers[0].env.map((e: any) => [
        e.name,
        e.value,
      ]),
    )
    expect(JSON.parse(env.DUTIL_UTILITY_CONCURRENCY)).toEqual({ 'html-pdf': 2 })
    expect(JSON.parse(env.DUTIL_RUNNER_RESOURCES)).toEqual({
      'split-pdf': { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '3Gi' } },
    })
    expect(env).toMatchObject({
      DUTIL_RETENTION_DAYS: '30',
      DUTIL_IMAGE_REGISTRY: 'registry.example.com/dutil',
      DUTIL_IMAGE_TAG: '1.2.3',
    })
    // Runner pods get per-job STS credentials from the operator, never the storage Secret.
    expect(env.DUTIL_STORAGE_SECRET).toBeUndefined()
    const backend = { service: { name: 'dutil-gateway', port: { name: 'http' } } }
    const [ingress] = byKind(docs, 'Ingress')
    expect(ingress.spec.rules).toEqual([
      {
        host: 'api.example.com',
        http: {
          paths: [
            { path: '/v1', pathType: 'Prefix', backend },
            { path: '/console', pathType: 'Prefix', backend },
          ],
        },
      },
    ])
    const apiOnly = byKind(
      render(
        '--set',
        'gateway.ingress.enabled=true',
        '--set',
        'gateway.ingress.host=api.example.com',
        '--set',
        'gateway.console.exposeOnIngress=false',
      ),
      'Ingress',
    )[0]
    expect(apiOnly.spec.rules[0].http.paths.map((p: any) => p.path)).toEqual(['/v1'])
    // Gotenberg's routes: off unless asked for; then the gateway serves them and the ingress routes them.
    const gatewayEnv = (d: Manifest[]) =>
      named(d, 'Deployment', 'dutil-gateway').spec.template.spec.containers[0].env.map((e: any) => e.name)
    expect(gatewayEnv(docs)).not.toContain('DUTIL_GOTENBERG_ROUTES')
    const gotenberg = render(
      '--set',
      'gateway.ingress.enabled=true',
      '--set',
      'gateway.ingress.host=api.example.com',
      '--set',
      'gateway.gotenbergRoutes.enabled=true',
    )
    expect(gatewayEnv(gotenberg)).toContain('DUTIL_GOTENBERG_ROUTES')
    expect(byKind(gotenberg, 'Ingress')[0].spec.rules[0].http.paths.map((p: any) => [p.path, p.pathType])).toEqual([
      ['/v1', 'Prefix'],
      ['/console', 'Prefix'],
      ['/forms', 'Prefix'],
      ['/health', 'Exact'],
      ['/version', 'Exact'],
    ])
    expect(() => render('--set', 'runners.split-pdf.resources.requests.cpu=lots')).toThrow(
      /runners\/split-pdf\/resources/,
    )
    expect(() => render('--set', 'retentionDays=0')).toThrow(/retentionDays/)
  })

  /** What the operator makes of the rendered DUTIL_RUNNER_POD, as it reads it at start. */
  async function runnerPodsOf(docs: Manifest[]) {
    const env = named(docs, 'Deployment', 'dutil-operator').spec.template.spec.containers[0].env
    const { parseRunnerPods } = await import('../../operator/runner-pod.js')
    return parseRunnerPods(env.find((e: any) => e.name === 'DUTIL_RUNNER_POD').value)
  }

  it("gives runner pods the chart's pull secrets and the placement set for all runners or one, which the operator accepts", async () => {
    const docs = render(
      '--set-json',
      'imagePullSecrets=[{"name":"regcred"}]',
      '--set-json',
      'runnerPod.nodeSelector={"pool":"documents"}',
      '--set-json',
      'runners.html-pdf.pod={"runtimeClassName":"gvisor","nodeSelector":{"pool":"sandboxed"}}',
    )
    const pods = await runnerPodsOf(docs)
    expect(pods['split-pdf']).toMatchObject({ imagePullSecrets: ['regcred'], nodeSelector: { pool: 'documents' } })
    expect(pods['html-pdf']).toMatchObject({
      imagePullSecrets: ['regcred'],
      nodeSelector: { pool: 'sandboxed' },
      runtimeClassName: 'gvisor',
    })
    expect(() => render('--set-json', 'runners.html-pdf.pod={"serviceAccountName":"x"}')).toThrow(
      /runners\/html-pdf\/pod/,
    )
  })

  it("turns Chromium's sandbox on for html-pdf with a node's seccomp profile, and refuses what could never start", async () => {
    const docs = render(
      '--set-json',
      'runners.html-pdf.pod={"browserSandbox":true,"seccompProfile":{"type":"Localhost","localhostProfile":"dutil/chromium-sandbox-seccomp.json"}}',
    )
    const pods = await runnerPodsOf(docs)
    expect(pods['html-pdf']).toMatchObject({
      browserSandbox: true,
      seccompProfile: { type: 'Localhost', localhostProfile: 'dutil/chromium-sandbox-seccomp.json' },
    })
    expect(pods['split-pdf'].seccompProfile).toEqual({ type: 'RuntimeDefault' })
    // A path out of the kubelet's seccomp directory, and the sandbox without a profile that allows it.
    expect(() =>
      render(
        '--set-json',
        'runners.html-pdf.pod={"seccompProfile":{"type":"Localhost","localhostProfile":"../x.json"}}',
      ),
    ).toThrow(/runners\/html-pdf\/pod\/seccompProfile/)
    await expect(runnerPodsOf(render('--set-json', 'runners.html-pdf.pod={"browserSandbox":true}'))).rejects.toThrow(
      /html-pdf browserSandbox needs a seccompProfile of type Localhost/,
    )
  })

  it('follows the conventions of charts: global for umbrella charts, name overrides, common labels, an HPA, spread and an HTTPRoute', () => {
    const docs = render(
      '--set-json',
      'global={"imageRegistry":"mirror.example.com"}',
      '--set',
      'fullnameOverride=docs',
      '--set-json',
      'commonLabels={"team":"documents"}',
      '--set',
      'gateway.autoscaling.enabled=true',
      '--set-json',
      'gateway.topologySpreadConstraints=[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway","labelSelector":{"matchLabels":{"app.kubernetes.io/component":"gateway"}}}]',
      '--set',
      'gateway.httpRoute.enabled=true',
      '--set-json',
      'gateway.httpRoute.parentRefs=[{"name":"public","namespace":"gateways"}]',
      '--set-json',
      'gateway.httpRoute.hostnames=["api.example.com"]',
    )
    for (const d of docs) expect(d.metadata.labels?.team, `${d.kind} ${d.metadata.name}`).toBe('documents')
    const gateway = named(docs, 'Deployment', 'docs-gateway')
    expect(gateway.spec.replicas).toBeUndefined()
    expect(gateway.spec.template.spec.topologySpreadConstraints[0].topologyKey).toBe('topology.kubernetes.io/zone')
    expect(named(docs, 'HorizontalPodAutoscaler', 'docs-gateway').spec).toMatchObject({
      scaleTargetRef: { kind: 'Deployment', name: 'docs-gateway' },
      minReplicas: 2,
      maxReplicas: 6,
    })
    const route = named(docs, 'HTTPRoute', 'docs-gateway').spec
    expect(route.parentRefs).toEqual([{ name: 'public', namespace: 'gateways' }])
    expect(route.rules.map((r: any) => [r.matches[0].path.value, r.backendRefs[0].name, r.timeouts.request])).toEqual([
      ['/v1', 'docs-gateway', '120s'],
      ['/console', 'docs-gateway', '120s'],
    ])
    // The operator is told the Lease its Role names, under the new prefix too.
    const operatorEnv = named(docs, 'Deployment', 'docs-operator').spec.template.spec.containers[0].env
    expect(operatorEnv.find((e: any) => e.name === 'DUTIL_LEASE_NAME').value).toBe('docs-operator')
    expect(
      named(docs, 'Role', 'docs-operator').rules.some((r: any) => r.resourceNames?.includes('docs-operator')),
    ).toBe(true)
    expect(byKind(render('--set', 'nameOverride=docsvc'), 'Deployment').map((d: any) => d.metadata.name)).toEqual([
      'dutil-docsvc-gateway',
      'dutil-docsvc-operator',
    ])
    expect(() => render('--set', 'gateway.httpRoute.requestTimeout=forever')).toThrow(/requestTimeout/)
  })

  it('offers a gateway NetworkPolicy: off by default; on, it selects the gateway pods and opens their named ports to `from` only', () => {
    expect(byKind(render(), 'NetworkPolicy').map((n) => n.metadata.name)).toEqual([`${RELEASE}-runners`])
    const docs = render(
      '--set',
      'gateway.networkPolicy.enabled=true',
      '--set',
      'gateway.files.enabled=true',
      '--set-json',
      'gateway.networkPolicy.from=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"ingress-nginx"}}}]',
    )
    const policy = byKind(docs, 'NetworkPolicy').find((n) => n.metadata.name === `${RELEASE}-gateway`)!
    const gateway = byKind(docs, 'Deployment').find((d) => d.metadata.name === `${RELEASE}-gateway`)!
    const podLabels = gateway.spec.template.metadata.labels as Record<string, string>
    for (const [k, v] of Object.entries(policy.spec.podSelector.matchLabels)) expect(podLabels[k]).toBe(v)
    expect(policy.spec.policyTypes).toEqual(['Ingress'])
    const named = (gateway.spec.template.spec.containers[0].ports as Array<{ name: string }>).map((p) => p.name)
    const opened = policy.spec.ingress[0].ports.map((p: { port: string }) => p.port)
    expect(opened).toEqual(['http', 'files'])
    for (const port of opened) expect(named).toContain(port)
    expect(policy.spec.ingress[0].from).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
    ])
    // Egress rules, when given, make egress a policy type of its own.
    const egress = render(
      '--set',
      'gateway.networkPolicy.enabled=true',
      '--set-json',
      'gateway.networkPolicy.egress=[{"ports":[{"protocol":"UDP","port":53}]}]',
    )
    const withEgress = byKind(egress, 'NetworkPolicy').find((n) => n.metadata.name === `${RELEASE}-gateway`)!
    expect(withEgress.spec.policyTypes).toEqual(['Ingress', 'Egress'])
    expect(withEgress.spec.egress).toEqual([{ ports: [{ protocol: 'UDP', port: 53 }] }])
  })

  it('turns tracing on with one value: both programs get the collector, runners an egress rule to it', () => {
    const envOf = (docs: Manifest[], name: string) =>
      Object.fromEntries(
        (
          named(docs, 'Deployment', `${RELEASE}-${name}`).spec.template.spec.containers[0].env as Array<{
            name: string
            value?: string
          }>
        ).map((e) => [e.name, e.value]),
      )
    const off = render()
    for (const program of ['gateway', 'operator']) {
      expect(envOf(off, program).DUTIL_LOG_LEVEL).toBe('info')
      expect(Object.keys(envOf(off, program)).filter((n) => n.startsWith('DUTIL_TRACING'))).toEqual([])
    }
    const collector = [{ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'obs' } } }] }]
    expect(
      named(render('--set-json', `tracing.egress=${JSON.stringify(collector)}`), 'NetworkPolicy', `${RELEASE}-runners`)
        .spec.egress,
    ).not.toContainEqual(collector[0])
    const on = render(
      '--set',
      'tracing.endpoint=http://otel-collector.obs:4318',
      '--set-json',
      'tracing.sampleRatio=0.1',
      '--set',
      'logLevel=debug',
      '--set-json',
      `tracing.egress=${JSON.stringify(collector)}`,
    )
    for (const program of ['gateway', 'operator'])
      expect(envOf(on, program)).toMatchObject({
        DUTIL_TRACING_ENDPOINT: 'http://otel-collector.obs:4318',
        DUTIL_TRACING_SAMPLE_RATIO: '0.1',
        DUTIL_TRACING_SERVICE_PREFIX: 'dutil-',
        DUTIL_LOG_LEVEL: 'debug',
      })
    expect(named(on, 'NetworkPolicy', `${RELEASE}-runners`).spec.egress).toContainEqual(collector[0])
    // The schema refuses what the programs would refuse at start.
    const bad = spawnSync(
      join(BIN_DIR, 'helm'),
      ['template', RELEASE, CHART, '-f', LINT_VALUES, '--set', 'tracing.sampleRatio=2'],
      {
        encoding: 'utf8',
      },
    )
    expect(bad.status).not.toBe(0)
    expect(bad.stderr).toMatch(/sampleRatio/)
  })

  it('gives the console its public URL and identity-provider settings, the client secret by Secret reference', () => {
    const docs = render(
      '--set',
      'gateway.console.publicUrl=https://dutil.example.com',
      '--set',
      'gateway.console.oidc.issuer=https://id.example.com',
      '--set',
      'gateway.console.oidc.clientId=dutil',
      '--set',
      'gateway.console.oidc.existingSecret=dutil-oidc',
      '--set-json',
      'gateway.console.oidc.allowedDomains=["example.com","example.org"]',
    )
    const env = named(docs, 'Deployment', 'dutil-gateway').spec.template.spec.containers[0].env
    const byName = Object.fromEntries(env.map((e: any) => [e.name, e]))
    expect(byName.DUTIL_PUBLIC_URL.value).toBe('https://dutil.example.com')
    expect(byName.DUTIL_OIDC_ISSUER.value).toBe('https://id.example.com')
    expect(byName.DUTIL_OIDC_CLIENT_ID.value).toBe('dutil')
    expect(byName.DUTIL_OIDC_CLIENT_SECRET).toEqual({
      name: 'DUTIL_OIDC_CLIENT_SECRET',
      valueFrom: { secretKeyRef: { name: 'dutil-oidc', key: 'clientSecret' } },
    })
    expect(byName.DUTIL_OIDC_ALLOWED_DOMAINS.value).toBe('example.com,example.org')
    expect(() => render('--set', 'gateway.console.oidc.issuer=https://id.example.com')).toThrow(
      /oidc.clientId is required/,
    )
    const plain = named(render(), 'Deployment', 'dutil-gateway').spec.template.spec.containers[0].env.map(
      (e: any) => e.name,
    )
    expect(plain.filter((n: string) => n.startsWith('DUTIL_OIDC') || n === 'DUTIL_PUBLIC_URL')).toEqual([])
  })
})

describe('dashboards and alerts', () => {
  const ON = ['--set', 'metrics.grafanaDashboard.enabled=true', '--set', 'metrics.prometheusRule.enabled=true']
  /** Every metric the gateway and the operator expose, histogram series included. */
  const exposed = new Set(
    [...gatewayMetrics().registry.getMetricsAsArray(), ...operatorMetrics().registry.getMetricsAsArray()].flatMap(
      (m) => {
        const name = (m as unknown as { name: string }).name
        return [name, `${name}_bucket`, `${name}_sum`, `${name}_count`]
      },
    ),
  )
  const metricsIn = (exprs: string[]) => [...new Set(exprs.flatMap((e) => e.match(/\bdutil_[a-z_]+/g) ?? []))]

  it('are off by default, and the chart lints clean with them on', () => {
    const docs = render()
    expect(byKind(docs, 'PrometheusRule')).toEqual([])
    expect(docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === 'dutil-dashboard')).toBeUndefined()
    expect(helm('lint', CHART, '--strict', '-f', LINT_VALUES, ...ON)).toContain('0 chart(s) failed')
  })

  it('ship a Grafana dashboard for the sidecar whose every query uses a metric the programs expose', () => {
    const cm = named(render(...ON), 'ConfigMap', 'dutil-dashboard')
    expect(cm.metadata.labels).toMatchObject({ grafana_dashboard: '1' })
    const dashboard = JSON.parse(cm.data['dutil-overview.json'])
    expect(dashboard.uid).toBe('dutil-overview')
    const panels = dashboard.panels.filter((p: { type: string }) => p.type !== 'row')
    expect(panels.map((p: { title: string }) => p.title)).toEqual(
      expect.arrayContaining([
        'Jobs finished by utility and state',
        'Queue wait (accept → runner start)',
        'Run time (runner start → finish)',
        'Failure ratio by error code',
        'Callback attempts by outcome',
        'Gateway latency',
        'Gateway errors',
        'Operator leadership',
      ]),
    )
    const exprs = panels.flatMap((p: { targets: Array<{ expr: string }> }) => p.targets.map((t) => t.expr))
    const used = metricsIn(exprs)
    expect(used.length).toBeGreaterThan(10)
    expect(used.filter((m) => !exposed.has(m))).toEqual([])
  })

  it('ship alerts that promtool accepts, on exposed metrics, that fire when they should (promtool test rules)', () => {
    const rule = byKind(
      render(...ON, '--set', 'metrics.prometheusRule.thresholds.queueWaitP95Seconds=300'),
      'PrometheusRule',
    )[0]
    const alerts = rule.spec.groups.flatMap((g: { rules: Array<{ alert: string; expr: string }> }) => g.rules)
    expect(alerts.map((a: { alert: string }) => a.alert)).toEqual([
      'DutilNoOperatorLeader',
      'DutilQueueWaitHigh',
      'DutilJobFailureRatioHigh',
      'DutilCallbacksFailing',
      'DutilStorageErrors',
    ])
    expect(alerts.find((a: { alert: string }) => a.alert === 'DutilQueueWaitHigh').expr).toMatch(/> 300$/)
    expect(metricsIn(alerts.map((a: { expr: string }) => a.expr)).filter((m) => !exposed.has(m))).toEqual([])
    const dir = mkdtempSync(join(scratchRoot, 'dutil-rules-'))
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: rule.spec.groups }))
    copyFileSync(join(REPO_ROOT, 'test/fixtures/alerts/dutil-alerts.test.yaml'), join(dir, 'alerts.test.yaml'))
    const promtool = (...args: string[]) => spawnSync(join(BIN_DIR, 'promtool'), args, { cwd: dir, encoding: 'utf8' })
    const checked = promtool('check', 'rules', 'rules.yaml')
    expect(checked.stdout + checked.stderr).toContain('SUCCESS: 5 rules found')
    expect(checked.status).toBe(0)
    const tested = promtool('test', 'rules', 'alerts.test.yaml')
    expect(tested.stdout + tested.stderr).toContain('SUCCESS')
    expect(tested.status).toBe(0)
    // Every alert has a runbook: a section of docs/runbooks.md named after it.
    const runbooks = readFileSync(join(REPO_ROOT, 'docs', 'runbooks.md'), 'utf8')
    for (const a of alerts as Array<{ alert: string; annotations: { runbook_url?: string } }>) {
      expect(a.annotations.runbook_url, a.alert).toMatch(new RegExp(`docs/runbooks\\.md#${a.alert.toLowerCase()}$`))
      expect(runbooks, a.alert).toContain(`\n## ${a.alert}\n`)
    }
  })

  it("keeps kube-prometheus' KubeJobFailed quiet for a failed job: its batch Job goes before the alert's 15 minutes", () => {
    // kube-state-metrics reports kube_job_failed 1 for as long as the failed Job exists; the
    // operator deletes it operator.failedJobGraceSeconds after recording the failure.
    const operator = byKind(render(), 'Deployment').find((d) => d.metadata.name === `${RELEASE}-operator`)!
    const env = operator.spec.template.spec.containers[0].env as Array<{ name: string; value: string }>
    const graceSeconds = Number(env.find((e) => e.name === 'DUTIL_FAILED_JOB_GRACE_SECONDS')!.value)
    expect(graceSeconds).toBeGreaterThan(0)
    const dir = mkdtempSync(join(scratchRoot, 'dutil-kube-rules-'))
    copyFileSync(join(REPO_ROOT, 'test/fixtures/alerts/kube-job-failed.rules.yaml'), join(dir, 'rules.yaml'))
    const series = (minutes: number) => ({
      series: `kube_job_failed{job="kube-state-metrics",namespace="${NS}",job_name="job-01jdutil",condition="true"}`,
      values: `1x${minutes} _x${40 - minutes}`,
    })
    const alert = {
      exp_labels: {
        severity: 'warning',
        job: 'kube-state-metrics',
        namespace: NS,
        job_name: 'job-01jdutil',
        condition: 'true',
      },
      exp_annotations: {
        summary: 'Job failed to complete.',
        description: `Job ${NS}/job-01jdutil failed to complete. Removing failed job after investigation should clear this alert.`,
      },
    }
    const tests = {
      rule_files: ['rules.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          // The failed Job gone after the grace (rounded up to whole minutes): no alert, ever.
          interval: '1m',
          input_series: [series(Math.ceil(graceSeconds / 60))],
          alert_rule_test: [0, 10, 16, 20, 30].map((m) => ({
            eval_time: `${m}m`,
            alertname: 'KubeJobFailed',
            exp_alerts: [],
          })),
        },
        {
          // The same failure with its Job kept (as before the grace existed): it alerts at 15 minutes.
          interval: '1m',
          input_series: [series(30)],
          alert_rule_test: [{ eval_time: '16m', alertname: 'KubeJobFailed', exp_alerts: [alert] }],
        },
      ],
    }
    writeFileSync(join(dir, 'test.yaml'), stringify(tests))
    const tested = spawnSync(join(BIN_DIR, 'promtool'), ['test', 'rules', 'test.yaml'], { cwd: dir, encoding: 'utf8' })
    expect(tested.stdout + tested.stderr).toContain('SUCCESS')
    expect(tested.status).toBe(0)
  })
})

describe('the chart on the local kube-apiserver', () => {
  it('applies with a server-side dry run into a namespace enforcing the restricted Pod Security Standard, without warnings', () => {
    const ns = 'dutil-chart-dry-run'
    kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: restricted } }),
    )
    // The helm test pod that runs a job uses the key-admin ServiceAccount, which an install has
    // made before `helm test` runs; a dry run persists nothing, so it is made here first.
    // (Made by create, not apply: the dry run's server-side apply then finds no client-side
    // apply annotation to migrate, and stays silent.)
    kubectl(['create', 'serviceaccount', `${RELEASE}-keys`, '-n', ns])
    const out = helm(
      'template',
      RELEASE,
      CHART,
      '--namespace',
      ns,
      '--include-crds',
      '-f',
      LINT_VALUES,
      '--set',
      'gateway.ingress.enabled=true',
      '--set',
      'gateway.ingress.host=api.example.com',
      '--set',
      'gateway.networkPolicy.enabled=true',
      '--set-json',
      'gateway.networkPolicy.from=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"ingress-nginx"}}}]',
    )
    const res = serverDryRun(ns, out)
    expect(res.stderr).toBe('')
    expect(res.status).toBe(0)
    for (const kind of [
      'customresourcedefinition.apiextensions.k8s.io/utilityjobs.dutil.io',
      'deployment.apps/dutil-gateway',
      'deployment.apps/dutil-operator',
      'role.rbac.authorization.k8s.io/dutil-operator',
      'networkpolicy.networking.k8s.io/dutil-runners',
      'networkpolicy.networking.k8s.io/dutil-gateway',
      'pod/dutil-test-api',
      'pod/dutil-test-job',
      'ingress.networking.k8s.io/dutil-gateway',
      'poddisruptionbudget.policy/dutil-operator',
    ]) {
      expect(res.stdout).toContain(`${kind} serverside-applied (server dry run)`)
    }
    // A trial (no values): the internal services pass the restricted profile too.
    const trial = serverDryRun(ns, helm('template', RELEASE, CHART, '--namespace', ns))
    expect(trial.stderr).toBe('')
    expect(trial.status).toBe(0)
    for (const kind of [
      'statefulset.apps/dutil-minio',
      'statefulset.apps/dutil-postgresql',
      'statefulset.apps/dutil-redis',
      'secret/dutil-internal',
      'networkpolicy.networking.k8s.io/dutil-postgresql',
    ])
      expect(trial.stdout).toContain(`${kind} serverside-applied (server dry run)`)
    kubectl(['delete', 'namespace', ns, '--wait=false'])
  })
})

const restricted = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/warn': 'restricted',
}

describe('helm install on the local platform: the programs run under the chart ServiceAccounts', () => {
  const env = () => inject('programEnv')
  const gatewayPort = () => Number(env().DUTIL_PORT) + 5
  const operatorPort = () => Number(env().DUTIL_PORT) + 6
  const baseUrl = () => `http://127.0.0.1:${gatewayPort()}`
  const core = () => kubeConfig().makeApiClient(CoreV1Api)
  let receiver: CallbackReceiver
  let key = ''
  let signingSecret = ''

  beforeAll(async () => {
    const tls = inject('callbackTls')
    receiver = await new CallbackReceiver({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }).start()
    const storage = inject('storage')
    kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: restricted } }),
    )
    kubectl([
      '-n',
      NS,
      'create',
      'secret',
      'generic',
      'dutil-storage',
      `--from-literal=accessKey=${storage.accessKey}`,
      `--from-literal=secretKey=${storage.secretKey}`,
    ])
    // The callback receiver's private CA, trusted the way the chart offers (trustedCaBundle).
    kubectl(['-n', NS, 'create', 'configmap', 'dutil-trusted-ca', `--from-file=ca.crt=${tls.caFile}`])
    // One database per installation: the release gets its own on the platform's PostgreSQL.
    const databaseUrl = await createDatabase(inject('databaseUrl'), 'dutil_chart')
    kubectl(['-n', NS, 'create', 'secret', 'generic', 'dutil-database', `--from-literal=url=${databaseUrl}`])
    helm(
      // The platform applied the same CRDs (crds/) with kubectl and keeps them: not the release's.
      'install',
      RELEASE,
      CHART,
      '--namespace',
      NS,
      '--force-conflicts',
      '-f',
      LINT_VALUES, // external services: the platform's
      '--set',
      'crds.install=false',
      '--set',
      `storage.endpoint=${storage.endpoint}`,
      '--set',
      'storage.existingSecret=dutil-storage',
      '--set',
      `storage.bucket=${storage.bucket}`,
      '--set',
      `redis.url=${inject('redisUrl')}/1`,
      '--set',
      'database.existingSecret=dutil-database',
      '--set',
      'image.registry=dutil.local',
      '--set',
      'image.tag=test',
      '--set',
      'gateway.replicas=1',
      '--set',
      'trustedCaBundle.configMap=dutil-trusted-ca',
      '--set',
      'operator.replicas=1', // the node agent runs pods on the host network: one port each
      '--set',
      `gateway.port=${gatewayPort()}`,
      '--set',
      `operator.port=${operatorPort()}`,
      // Dev allowances for this test only: callbacks to the loopback receiver, on a fast schedule.
      '--set-json',
      'operator.extraEnv=[{"name":"DUTIL_ALLOW_LOOPBACK_URLS","value":"true"},{"name":"DUTIL_CALLBACK_DELAY_SCALE","value":"0.01"}]',
    )
    await until(
      'chart gateway ready',
      async () => (await fetch(`${baseUrl()}/readyz`).catch(() => null))?.status === 200,
      90_000,
      250,
    )
    await until(
      'chart operator ready',
      async () => (await fetch(`http://127.0.0.1:${operatorPort()}/readyz`).catch(() => null))?.status === 200,
      90_000,
      250,
    )
  }, 180_000)

  afterAll(async () => {
    await receiver?.stop()
    try {
      helm('uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '60s')
    } finally {
      kubectl(['delete', 'namespace', NS, '--wait=false'])
    }
  }, 120_000)

  const podsOf = async (component: string) =>
    (await core().listNamespacedPod({ namespace: NS, labelSelector: `app.kubernetes.io/component=${component}` })).items
  const podLog = (pod: V1Pod, container: string) => {
    const file = join(inject('platformDir'), 'node', pod.metadata!.uid!, `${container}.log`)
    return existsSync(file) ? readFileSync(file, 'utf8') : ''
  }

  it('runs the gateway and the operator as pods authenticated as their own ServiceAccounts', async () => {
    const [gw] = await podsOf('gateway')
    const [op] = await podsOf('operator')
    expect(gw.spec!.serviceAccountName).toBe('dutil-gateway')
    expect(op.spec!.serviceAccountName).toBe('dutil-operator')
    expect(podLog(gw, 'gateway')).toContain(`"kubeUser":"system:serviceaccount:${NS}:dutil-gateway"`)
    expect(podLog(op, 'operator')).toContain(`"kubeUser":"system:serviceaccount:${NS}:dutil-operator"`)
    expect(podLog(op, 'operator')).toContain('acquired the lease')
  })

  it('gives the operator, and the gateway with the key commands, API priority levels of their own (FlowSchemas matched before the shared service-accounts one)', async () => {
    const flow = kubeConfig().makeApiClient(FlowcontrolApiserverV1Api)
    const selector = `app.kubernetes.io/instance=${RELEASE}`
    const schemas = (await flow.listFlowSchema({ labelSelector: selector })).items
    const levels = (await flow.listPriorityLevelConfiguration({ labelSelector: selector })).items
    const uid = (items: Array<{ metadata?: { name?: string; uid?: string } }>, name: string) =>
      items.find((i) => i.metadata?.name === name)?.metadata?.uid
    /** The FlowSchema and priority level the API server put a request of this user in (its response headers). */
    const classified = async (user: string) => {
      const kc = kubeConfig()
      const opts: https.RequestOptions = { headers: { 'Impersonate-User': user } }
      await kc.applyToHTTPSOptions(opts)
      const url = new URL(`/api/v1/namespaces/${NS}/configmaps?limit=1`, kc.getCurrentCluster()!.server)
      return new Promise<{ schema: string; level: string }>((resolve, reject) => {
        https
          .get(url, opts, (res) => {
            res.resume()
            resolve({
              schema: String(res.headers['x-kubernetes-pf-flowschema-uid']),
              level: String(res.headers['x-kubernetes-pf-prioritylevel-uid']),
            })
          })
          .on('error', reject)
      })
    }
    for (const [sa, level] of [
      ['dutil-operator', 'operator'],
      ['dutil-gateway', 'api'],
      ['dutil-keys', 'api'],
    ] as const) {
      const name = `dutil-${NS}-${level}`
      expect(uid(schemas, name), name).toBeDefined()
      expect(await classified(`system:serviceaccount:${NS}:${sa}`), sa).toEqual({
        schema: uid(schemas, name),
        level: uid(levels, name),
      })
    }
    // Another ServiceAccount of the namespace stays in the cluster's own schema.
    expect((await classified(`system:serviceaccount:${NS}:default`)).schema).toBe(
      (await flow.readFlowSchema({ name: 'service-accounts' })).metadata!.uid,
    )
  })

  it('lets each ServiceAccount do what its program needs and nothing more', () => {
    const can = (sa: string, ...args: string[]) => {
      const r = spawnSync(
        join(BIN_DIR, 'kubectl'),
        ['--kubeconfig', kubeconfig(), 'auth', 'can-i', '-n', NS, `--as=system:serviceaccount:${NS}:${sa}`, ...args],
        { encoding: 'utf8' },
      )
      return r.stdout.trim()
    }
    expect(can('dutil-gateway', 'create', 'utilityjobs.dutil.io')).toBe('yes')
    expect(can('dutil-gateway', 'patch', 'utilityjobs.dutil.io')).toBe('yes')
    expect(can('dutil-gateway', 'update', 'utilityjobs.dutil.io', '--subresource=status')).toBe('no')
    // The console manages keys and people's credentials: two named Secrets, and no other Secret
    // of the namespace (not the storage or database credentials, not Helm's release records).
    expect(can('dutil-gateway', 'get', 'secrets/dutil-signing-secrets')).toBe('yes')
    expect(can('dutil-gateway', 'patch', 'secrets/dutil-console-credentials')).toBe('yes')
    for (const other of ['dutil-storage', 'dutil-database', 'sh.helm.release.v1.dutil.v1', 'anything-else']) {
      expect(can('dutil-gateway', 'get', `secrets/${other}`), other).toBe('no')
      expect(can('dutil-gateway', 'update', `secrets/${other}`), other).toBe('no')
      expect(can('dutil-operator', 'get', `secrets/${other}`), other).toBe('no')
      expect(can('dutil-keys', 'get', `secrets/${other}`), other).toBe('no')
    }
    expect(can('dutil-gateway', 'get', 'secrets')).toBe('no')
    expect(can('dutil-gateway', 'list', 'secrets')).toBe('no')
    expect(can('dutil-gateway', 'delete', 'secrets')).toBe('no')
    expect(can('dutil-operator', 'create', 'secrets')).toBe('no')
    expect(can('dutil-operator', 'get', 'secrets/dutil-signing-secrets')).toBe('yes')
    expect(can('dutil-operator', 'get', 'secrets/dutil-console-credentials')).toBe('no')
    expect(can('dutil-gateway', 'create', 'apikeys.dutil.io')).toBe('yes')
    expect(can('dutil-gateway', 'delete', 'apikeys.dutil.io')).toBe('no')
    expect(can('dutil-gateway', 'create', 'consoleusers.dutil.io')).toBe('yes')
    expect(can('dutil-operator', 'update', 'utilityjobs.dutil.io', '--subresource=status')).toBe('yes')
    expect(can('dutil-operator', 'create', 'utilityjobs.dutil.io')).toBe('no')
    expect(can('dutil-operator', 'create', 'jobs.batch')).toBe('yes')
    expect(can('dutil-operator', 'list', 'secrets')).toBe('no')
    expect(can('dutil-operator', 'update', 'leases.coordination.k8s.io/some-other-lease')).toBe('no')
    expect(can('dutil-operator', 'create', 'pods')).toBe('no')
    expect(can('default', 'get', 'utilityjobs.dutil.io')).toBe('no')
    expect(can('dutil-gateway', 'list', 'utilityjobs.dutil.io', '-n', 'default')).toBe('no')
  })

  it("refuses, as the operator's ServiceAccount, a batch Job that mounts a Secret, reads one into its environment, runs another ServiceAccount or another image", () => {
    const runnerJob = (change: (pod: any) => void) => {
      const pod: any = {
        restartPolicy: 'Never',
        automountServiceAccountToken: false,
        securityContext: { runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [
          {
            name: 'runner',
            image: 'dutil.local/dutil-runner-split-pdf:test',
            command: ['node', '--max-old-space-size=256', '/app/dist/runners/split-pdf/bundle/main.js'],
            securityContext: {
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              capabilities: { drop: ['ALL'] },
            },
          },
        ],
      }
      change(pod)
      return JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { generateName: 'probe-' },
        spec: {
          activeDeadlineSeconds: 900,
          template: {
            metadata: {
              labels: {
                'app.kubernetes.io/managed-by': 'dutil',
                'dutil.io/job-id': 'job-probe',
                'dutil.io/utility': 'split-pdf',
              },
            },
            spec: { activeDeadlineSeconds: 960, ...pod },
          },
        },
      })
    }
    const create = (job: string) =>
      spawnSync(
        join(BIN_DIR, 'kubectl'),
        [
          '--kubeconfig',
          kubeconfig(),
          'create',
          '--dry-run=server',
          '-n',
          NS,
          `--as=system:serviceaccount:${NS}:dutil-operator`,
          '-f',
          '-',
          '-o',
          'name',
        ],
        {
          input: job,
          encoding: 'utf8',
        },
      )
    // A runner Job as the operator makes it passes.
    const ok = create(runnerJob(() => {}))
    expect(ok.stderr).toBe('')
    expect(ok.status).toBe(0)
    const attempts: Array<[string, (pod: any) => void, string]> = [
      [
        'a Secret volume',
        (p) => (
          (p.volumes = [{ name: 's', secret: { secretName: 'dutil-storage' } }]),
          (p.containers[0].volumeMounts = [{ name: 's', mountPath: '/s' }])
        ),
        'may not mount Secrets',
      ],
      [
        'a Secret in the environment',
        (p) =>
          (p.containers[0].env = [{ name: 'X', valueFrom: { secretKeyRef: { name: 'dutil-database', key: 'url' } } }]),
        'may not read Secrets into their environment',
      ],
      [
        'a Secret as envFrom',
        (p) => (p.containers[0].envFrom = [{ secretRef: { name: 'dutil-storage' } }]),
        'may not read Secrets into their environment',
      ],
      [
        'another ServiceAccount',
        (p) => (p.serviceAccountName = 'dutil-gateway'),
        'default ServiceAccount, without a token',
      ],
      ['a token', (p) => (p.automountServiceAccountToken = true), 'default ServiceAccount, without a token'],
      ['another image', (p) => (p.containers[0].image = 'busybox'), "dutil's runner images only"],
      ['the host network', (p) => (p.hostNetwork = true), "host's namespaces"],
      [
        'a hostPath volume',
        (p) => (
          (p.volumes = [{ name: 'h', hostPath: { path: '/' } }]),
          (p.containers[0].volumeMounts = [{ name: 'h', mountPath: '/host' }])
        ),
        'no hostPath',
      ],
      ['a privileged container', (p) => (p.containers[0].securityContext.privileged = true), 'privileged'],
      [
        'an added capability',
        (p) => (p.containers[0].securityContext.capabilities = { drop: ['ALL'], add: ['NET_RAW'] }),
        'add capabilities',
      ],
      [
        'privilege escalation',
        (p) => (p.containers[0].securityContext.allowPrivilegeEscalation = true),
        'privilege escalation',
      ],
      [
        'root',
        (p) => ((p.securityContext.runAsNonRoot = false), (p.securityContext.runAsUser = 0)),
        'must run as non-root',
      ],
      ['root in the container', (p) => (p.containers[0].securityContext.runAsUser = 0), 'must run as non-root'],
      [
        'no seccomp profile',
        (p) => (p.securityContext.seccompProfile = { type: 'Unconfined' }),
        "runtime's seccomp profile",
      ],
      [
        'a host port',
        (p) => (p.containers[0].ports = [{ containerPort: 8080, hostPort: 8080 }]),
        'may not bind host ports',
      ],
      ['a node named in advance', (p) => (p.nodeName = 'some-node'), 'never on a node named in advance'],
      [
        'a command of its own',
        (p) => (p.containers[0].command = ['node', '-e', 'require("child_process").execSync("id")']),
        "runner's own command",
      ],
      [
        'a required module',
        (p) =>
          (p.containers[0].command = ['node', '--require=/tmp/x.js', '/app/dist/runners/split-pdf/bundle/main.js']),
        "runner's own command",
      ],
      ['arguments', (p) => (p.containers[0].args = ['--inspect']), "runner's own command"],
    ]
    for (const [what, change, message] of attempts) {
      const r = create(runnerJob(change))
      expect(r.status, what).not.toBe(0)
      expect(r.stderr, what).toContain(message)
    }
  })

  it('lets the gateway and key-admin ServiceAccounts create only the two named Secrets', () => {
    const create = (sa: string, name: string) =>
      spawnSync(
        join(BIN_DIR, 'kubectl'),
        [
          '--kubeconfig',
          kubeconfig(),
          'create',
          'secret',
          'generic',
          name,
          '--from-literal=a=b',
          '--dry-run=server',
          '-n',
          NS,
          `--as=system:serviceaccount:${NS}:${sa}`,
        ],
        {
          encoding: 'utf8',
        },
      )
    for (const sa of ['dutil-gateway', 'dutil-keys']) {
      // RBAC lets them create Secrets (it cannot name them); the admission policy refuses other names.
      for (const name of ['dutil-storage-copy', 'anything-else']) {
        const r = create(sa, name)
        expect(r.status, `${sa} ${name}`).not.toBe(0)
        expect(r.stderr, `${sa} ${name}`).toContain("dutil's programs may create only its two named Secrets")
      }
    }
    // The named one is refused for another reason only: it exists (the programs made it on first use).
    expect(create('dutil-gateway', 'dutil-signing-secrets').stderr).toContain('already exists')
  })

  it('says loudly in the NOTES when the namespace does not enforce the restricted Pod Security standard, and nothing when it does', () => {
    expect(helm('get', 'notes', RELEASE, '--namespace', NS)).not.toContain('DOES NOT ENFORCE')
    const bare = 'dutil-chart-no-pss'
    kubectl(['create', 'namespace', bare])
    try {
      // A server-side dry run reads the cluster (`lookup`) as an install does.
      const notes = helm(
        'install',
        'probe',
        CHART,
        '--namespace',
        bare,
        '-f',
        LINT_VALUES,
        '--set',
        'crds.install=false', // the platform's CRDs are not the release's
        '--dry-run=server',
      )
      expect(notes).toContain(`WARNING: NAMESPACE ${bare} DOES NOT ENFORCE THE RESTRICTED POD SECURITY STANDARD.`)
      expect(notes).toContain(`kubectl label namespace ${bare} pod-security.kubernetes.io/enforce=restricted`)
    } finally {
      kubectl(['delete', 'namespace', bare, '--wait=false'])
    }
  })

  it('creates the first key with the command NOTES.txt gives (run as a pod under the key-admin ServiceAccount)', async () => {
    // The node's own user has a CLI context elsewhere (as `make dev` writes one): a pod must not
    // read it (its home is its own), or the command goes to that cluster instead of this one.
    writeConfig(join(inject('platformDir'), 'node-agent-home', '.config', 'dutil', 'config.yaml'), {
      currentContext: 'elsewhere',
      contexts: [{ name: 'elsewhere', kubeconfig: '/nonexistent/kubeconfig', namespace: 'elsewhere' }],
    })
    const command = firstKeyCommand(helm('get', 'notes', RELEASE, '--namespace', NS))
    // Without a terminal to attach: the pod runs detached and its output is read from the node.
    const detached = command
      .replace(' --rm -i --quiet', '')
      .replace(/^kubectl /, `${join(BIN_DIR, 'kubectl')} --kubeconfig ${kubeconfig()} `)
    execFileSync('bash', ['-c', detached], { encoding: 'utf8' })
    let pod: V1Pod | undefined
    await until(
      'key pod done',
      async () => {
        pod = await core().readNamespacedPod({ name: 'dutil-keys', namespace: NS })
        return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed'
      },
      60_000,
      250,
    )
    const out = podLog(pod!, 'dutil-keys')
    expect(pod!.status?.phase, out).toBe('Succeeded')
    key = /key:\s+(du_live_[0-9a-f]{48})/.exec(out)![1]
    signingSecret = /signing secret:\s+(whsec_\S+)/.exec(out)![1]
    const keys = (await kubeConfig().makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: NS,
      plural: API_KEY.plural,
    })) as { items: any[] }
    expect(keys.items.map((k) => k.spec.name)).toEqual(['first-key'])
    expect(keys.items[0].spec.rateLimitPerMinute).toBe(600)
    await core().deleteNamespacedPod({ name: 'dutil-keys', namespace: NS })
  })

  it('splits a PDF end to end, cancels a queued job, signs and delivers a callback, records lastUsedAt', async () => {
    expect(key).not.toBe('')
    // Input from a loopback file server (the release's operator allows loopback URLs for this test).
    const files = await new FileServer().start()
    onTestFinished(() => files.stop())
    const input = { url: files.add('chart.pdf', await makePdf(3)) }

    const sync = await api('POST', '/v1/utilities/split-pdf', { key, baseUrl: baseUrl(), body: { input } })
    expect(sync.status, JSON.stringify(sync.body)).toBe(200)
    expect(sync.body.result.pageCount).toBe(3)
    expect((await fetch(sync.body.result.files[0].url)).status).toBe(200)
    const runner = (
      await core().listNamespacedPod({ namespace: NS, labelSelector: 'app.kubernetes.io/managed-by=dutil' })
    ).items[0]
    expect(runner.spec!.automountServiceAccountToken).toBe(false)
    expect(runner.spec!.volumes ?? []).not.toContainEqual(expect.objectContaining({ projected: expect.anything() }))

    const cancelled = await whileCordoned(async () => {
      const queued = await api('POST', '/v1/utilities/split-pdf/jobs', { key, baseUrl: baseUrl(), body: { input } })
      expect(queued.status).toBe(202)
      return api('POST', `/v1/jobs/${queued.body.id}/cancel`, { key, baseUrl: baseUrl() })
    })
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200)
    expect(cancelled.body.status).toBe('cancelled')

    const hook = receiver.url('/chart/1', 204)
    const async = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key,
      baseUrl: baseUrl(),
      body: { input, callbackUrl: hook },
    })
    expect(async.status).toBe(202)
    const [delivered] = await receiver.waitFor('/chart/1', 1, 60_000)
    const event = new Webhook(signingSecret).verify(delivered.body, delivered.headers) as any
    expect(event).toMatchObject({ type: 'job.succeeded', data: { id: async.body.id, status: 'succeeded' } })
    await expect
      .poll(
        async () => (await api('GET', `/v1/jobs/${async.body.id}`, { key, baseUrl: baseUrl() })).body.callback?.status,
        { timeout: 10_000 },
      )
      .toBe('delivered')

    await expect
      .poll(
        async () =>
          (
            (await kubeConfig().makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
              group: API_GROUP,
              version: API_VERSION,
              namespace: NS,
              plural: API_KEY.plural,
            })) as { items: any[] }
          ).items[0].status?.lastUsedAt,
        { timeout: 10_000 },
      )
      .toBeTruthy()
    const table = kubectl(['get', 'utilityjobs', '-n', NS])
    expect(table.split('\n')[0]).toMatch(
      /NAME\s+JOB ID\s+UTILITY\s+MODE\s+STATUS\s+ERROR\s+PROGRESS\s+DURATION-MS\s+AGE/,
    )
    expect(table).toMatch(new RegExp(`${sync.body.id}\\s+split-pdf\\s+sync\\s+succeeded`))
    expect(table).toMatch(/cancelled/)
  })

  it("carries a small input sealed in its job once the operator's leader said, under its own ServiceAccount, that it runs such jobs", async () => {
    // The leader says so at once if the signing Secret exists, else when it next tries (30 s).
    await until(
      'the operator says it runs jobs whose input rides with them',
      async () =>
        (await core().readNamespacedSecret({ name: SECRET_OBJECTS.signing, namespace: NS })).data?.[
          SEALED_INPUTS_ENTRY
        ] !== undefined,
      45_000,
      500,
    )
    const files = await new FileServer().start()
    onTestFinished(() => files.stop())
    const input = { url: files.add('sealed.pdf', await makePdf(1)) }
    const res = await api('POST', '/v1/utilities/split-pdf', { key, baseUrl: baseUrl(), body: { input } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const uj = (await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: NS,
        plural: UTILITY_JOB.plural,
        name: objectNameOf(res.body.id),
      })) as UtilityJobResource
    expect(uj.spec.sealedInput).toMatch(/^v1\./)
  })

  it('keeps signing secrets in the one named Secret the gateway made, with the workspace entry', async () => {
    try {
      const s = await core().readNamespacedSecret({ name: SECRET_OBJECTS.signing, namespace: NS })
      expect(Buffer.from(s.data!.workspace, 'base64').toString()).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    } catch (err) {
      throw new Error(`no signing secrets (${apiStatus(err)})`)
    }
  })
})

describe('the runner admission policy as a platform team renders it, on the local kube-apiserver', () => {
  const ns = 'dutil-runner-policy'
  const operator = `system:serviceaccount:${ns}:${RELEASE}-operator`
  // Placement values a platform team sets: every runner tolerates its nodes' taint, split-pdf runs
  // at a priority of its own, and a node label no node has (nothing made here is ever scheduled).
  const values = [
    '--set',
    'runners.split-pdf.mode=pool',
    '--set-json',
    'runnerPod.nodeSelector={"dutil.io/runner-policy-test":"none"}',
    '--set-json',
    'runnerPod.tolerations=[{"key":"dedicated","operator":"Equal","value":"runners","effect":"NoSchedule"}]',
    '--set',
    'runners.split-pdf.pod.priorityClassName=dutil-runner-policy-batch',
    '--set',
    'runnerPod.podLabels.cost-center=documents',
  ]
  const docs = () =>
    parsed(
      helm(
        'template',
        RELEASE,
        CHART,
        '--namespace',
        ns,
        '-f',
        LINT_VALUES,
        ...values,
        '--show-only',
        'templates/runner-admission-policy.yaml',
        '--show-only',
        'templates/rbac.yaml',
        '--show-only',
        'templates/operator-deployment.yaml',
      ),
    )
  let rendered: Manifest[]
  let settings: ReturnType<typeof runnerSettings>
  const as = (verb: string[], body: unknown) =>
    spawnSync(
      join(BIN_DIR, 'kubectl'),
      ['--kubeconfig', kubeconfig(), ...verb, '-n', ns, `--as=${operator}`, '-f', '-', '-o', 'name'],
      { input: JSON.stringify(body), encoding: 'utf8' },
    )
  const dryRun = (body: unknown) => as(['create', '--dry-run=server'], body)
  const job = (slug: string, change: (j: any) => void = () => {}) => {
    const uj = {
      metadata: { name: 'job-01m8abcdefghjkmnpqrstvwxyz', namespace: ns, uid: 'uid-1' },
      spec: {
        jobId: 'job_01M8ABCDEFGHJKMNPQRSTVWXYZ',
        utility: slug,
        mode: 'async',
        createdAt: new Date().toISOString(),
      },
    } as unknown as UtilityJobResource
    const j: any = desiredJob(uj, catalog.get(slug)!, settings, {
      accessKey: 'a',
      secretKey: 's',
      sessionToken: 't',
      expiresAt: '',
    })
    delete j.metadata.ownerReferences
    change(j)
    return j
  }
  const poolPod = (change: (p: any) => void = () => {}) => {
    const p: any = desiredPoolPod(
      catalog.get('split-pdf')!,
      settings,
      { size: 2, spare: 1, restartEvery: 100, idleSeconds: 300 },
      `${RELEASE}-pool-split-pdf-${Math.random().toString(36).slice(2, 8)}`,
      ns,
      'token',
    )
    change(p)
    return p
  }

  beforeAll(async () => {
    kubectl(['create', 'namespace', ns])
    rendered = docs()
    const env = named(rendered, 'Deployment', `${RELEASE}-operator`).spec.template.spec.containers[0].env
    const value = (name: string) => env.find((e: any) => e.name === name)?.value
    settings = runnerSettings({
      imageRegistry: value('DUTIL_IMAGE_REGISTRY'),
      imageTag: value('DUTIL_IMAGE_TAG'),
      pods: parseRunnerPods(value('DUTIL_RUNNER_POD')),
    })
    const applied = rendered.filter((d) =>
      [
        'ValidatingAdmissionPolicy',
        'ValidatingAdmissionPolicyBinding',
        'Role',
        'RoleBinding',
        'ServiceAccount',
      ].includes(d.kind),
    )
    kubectl(['apply', '-n', ns, '-f', '-'], applied.map((d) => stringify(d)).join('---\n'))
    kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: { name: 'dutil-runner-policy-batch' },
        value: 1000,
      }),
    )
    // A policy is enforced once the API server has compiled it: a Job with a Secret volume is refused then.
    await until(
      'runner policy enforced',
      async () => {
        const r = dryRun(
          job('zip-files', (j) => (j.spec.template.spec.volumes = [{ name: 's', secret: { secretName: 'x' } }])),
        )
        return r.status !== 0 && r.stderr.includes('may not mount')
      },
      60_000,
      500,
    )
  }, 120_000)
  afterAll(() => {
    kubectl(
      ['delete', '-f', '-', '--ignore-not-found', '--wait=false'],
      rendered
        .filter((d) => d.kind.startsWith('ValidatingAdmissionPolicy'))
        .map((d) => stringify(d))
        .join('---\n'),
    )
    kubectl(['delete', 'priorityclass', 'dutil-runner-policy-batch', '--ignore-not-found'])
    kubectl(['delete', 'namespace', ns, '--wait=false'])
  })

  it('admits what the operator makes, for each utility, and refuses every change an attacker holding its ServiceAccount would make', () => {
    for (const slug of catalog.keys()) {
      const ok = dryRun(job(slug))
      expect(ok.stderr, slug).toBe('')
      expect(ok.status, slug).toBe(0)
    }
    const attempts: Array<[string, (j: any) => void, string]> = [
      ['no NetworkPolicy label', (j) => delete j.spec.template.metadata.labels['dutil.io/job-id'], 'carry the labels'],
      [
        'another managed-by',
        (j) => (j.spec.template.metadata.labels['app.kubernetes.io/managed-by'] = 'x'),
        'carry the labels',
      ],
      ['no time limit', (j) => delete j.spec.activeDeadlineSeconds, 'have a time limit'],
      ['no pod time limit', (j) => delete j.spec.template.spec.activeDeadlineSeconds, 'have a time limit'],
      [
        'a claim clone',
        (j) => (
          (j.spec.template.spec.volumes = [
            {
              name: 'e',
              ephemeral: {
                volumeClaimTemplate: {
                  spec: {
                    accessModes: ['ReadWriteOnce'],
                    dataSource: { kind: 'PersistentVolumeClaim', name: 'other' },
                    resources: { requests: { storage: '1Gi' } },
                  },
                },
              },
            },
          ]),
          (j.spec.template.spec.containers[0].volumeMounts = [{ name: 'e', mountPath: '/e' }])
        ),
        'only emptyDir',
      ],
      [
        'a configMap volume',
        (j) => (
          (j.spec.template.spec.volumes = [{ name: 'c', configMap: { name: 'x' } }]),
          (j.spec.template.spec.containers[0].volumeMounts = [{ name: 'c', mountPath: '/c' }])
        ),
        'only emptyDir',
      ],
      [
        'a lifecycle hook',
        (j) => (j.spec.template.spec.containers[0].lifecycle = { postStart: { exec: { command: ['id'] } } }),
        'no lifecycle hooks',
      ],
      [
        'an exec probe',
        (j) => (j.spec.template.spec.containers[0].readinessProbe = { exec: { command: ['id'] } }),
        'no exec probes',
      ],
      [
        'NODE_OPTIONS',
        (j) => j.spec.template.spec.containers[0].env.push({ name: 'NODE_OPTIONS', value: '--require=/tmp/x.js' }),
        'no NODE_OPTIONS',
      ],
      [
        'LD_PRELOAD',
        (j) => j.spec.template.spec.containers[0].env.push({ name: 'LD_PRELOAD', value: '/tmp/x.so' }),
        'no NODE_OPTIONS',
      ],
      [
        'envFrom a configMap',
        (j) => (j.spec.template.spec.containers[0].envFrom = [{ configMapRef: { name: 'x' } }]),
        'no envFrom',
      ],
      [
        'another nodeSelector',
        (j) => (j.spec.template.spec.nodeSelector = { 'kubernetes.io/hostname': 'victim' }),
        'are placed',
      ],
      [
        'an affinity',
        (j) =>
          (j.spec.template.spec.affinity = {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' }] },
                ],
              },
            },
          }),
        'are placed',
      ],
      ['a runtimeClass', (j) => (j.spec.template.spec.runtimeClassName = 'runc-privileged'), 'are placed'],
      [
        'a wider toleration',
        (j) => (j.spec.template.spec.tolerations = [{ operator: 'Exists' }]),
        'tolerate and take priority',
      ],
      [
        'a priority',
        (j) => (j.spec.template.spec.priorityClassName = 'system-cluster-critical'),
        'tolerate and take priority',
      ],
      [
        'a Localhost seccomp profile',
        (j) =>
          (j.spec.template.spec.securityContext.seccompProfile = {
            type: 'Localhost',
            localhostProfile: 'anything.json',
          }),
        'seccomp profile the chart names',
      ],
    ]
    for (const [what, change, message] of attempts) {
      const r = dryRun(job('zip-files', change))
      expect(r.status, what).not.toBe(0)
      expect(r.stderr, what).toContain(message)
    }
    // split-pdf's own priority is its, not zip-files'.
    expect(dryRun(job('split-pdf')).status).toBe(0)
    expect(
      dryRun(job('zip-files', (j) => (j.spec.template.spec.priorityClassName = 'dutil-runner-policy-batch'))).status,
    ).not.toBe(0)
  })

  it('admits a pool pod as the operator makes it, lets it be bound to a tenant once, and refuses labels patched off or changed', async () => {
    const created = as(['create'], poolPod())
    expect(created.stderr).toBe('')
    const name = created.stdout.trim().replace(/^pod\//, '')
    const patch = (labels: Record<string, string | null>) =>
      spawnSync(
        join(BIN_DIR, 'kubectl'),
        [
          '--kubeconfig',
          kubeconfig(),
          'patch',
          'pod',
          name,
          '-n',
          ns,
          `--as=${operator}`,
          '--type=merge',
          '-p',
          JSON.stringify({ metadata: { labels } }),
        ],
        { encoding: 'utf8' },
      )
    expect(patch({ 'dutil.io/pool-tenant': 'tenant-a' }).status).toBe(0)
    for (const [what, labels, message] of [
      ['the pool label off', { 'dutil.io/pool': null }, 'carry the labels'],
      ['managed-by off', { 'app.kubernetes.io/managed-by': null }, 'carry the labels'],
      ['a new label', { 'dutil.io/job-id': 'job-x' }, 'keeps its labels'],
      ["the platform team's label off", { 'cost-center': null }, 'keeps its labels'],
      ['another tenant', { 'dutil.io/pool-tenant': 'tenant-b' }, 'tenant of its first job'],
    ] as const) {
      const r = patch(labels)
      expect(r.status, what).not.toBe(0)
      expect(r.stderr, what).toContain(message)
    }
    // Without the policy (an admin's patch; a cluster without it) the operator's own binding is
    // still atomic: a leader whose view of the pod predates another leader's binding is refused.
    const admin = kubeConfig().makeApiClient(CoreV1Api)
    const generic = await admin.createNamespacedPod({ namespace: ns, body: poolPod() })
    const bindAs = (seen: V1Pod, tenant: string) =>
      admin.patchNamespacedPod(
        { name: generic.metadata!.name!, namespace: ns, body: tenantBinding(seen, tenant) },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
    // The first leader binds from a current view (the scheduler writes the new pod's status once,
    // so a view from before that is already stale, and is refused the same way).
    const current = () => admin.readNamespacedPod({ name: generic.metadata!.name!, namespace: ns })
    const seen = await current()
    const bound = await until('pod bound from a current view', async () =>
      bindAs(await current(), 'tenant-a').catch((e: unknown) => (apiStatus(e) === 409 ? undefined : Promise.reject(e))),
    )
    expect(bound.metadata!.labels!['dutil.io/pool-tenant']).toBe('tenant-a')
    // Another leader's view from before that binding.
    expect(apiStatus(await bindAs(seen, 'tenant-b').catch((e: unknown) => e))).toBe(409)
    expect(apiStatus(await bindAs(generic, 'tenant-b').catch((e: unknown) => e))).toBe(409)
    const kept = await admin.readNamespacedPod({ name: generic.metadata!.name!, namespace: ns })
    expect(kept.metadata!.labels!['dutil.io/pool-tenant']).toBe('tenant-a')
    for (const [what, change, message] of [
      ['no pool label', (p: any) => delete p.metadata.labels['dutil.io/pool'], 'carry the labels'],
      ['no time limit', (p: any) => delete p.spec.activeDeadlineSeconds, 'have a time limit'],
      [
        'an exec probe',
        (p: any) => (p.spec.containers[0].readinessProbe = { exec: { command: ['id'] } }),
        'no exec probes',
      ],
      ['a wider toleration', (p: any) => (p.spec.tolerations = [{ operator: 'Exists' }]), 'tolerate and take priority'],
      [
        'a system priority',
        (p: any) => (p.spec.priorityClassName = 'system-node-critical'),
        'tolerate and take priority',
      ],
    ] as const) {
      const r = dryRun(poolPod(change))
      expect(r.status, what).not.toBe(0)
      expect(r.stderr, what).toContain(message)
    }
  })
})
