import { BatchV1Api } from '@kubernetes/client-node'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import XLSX from 'xlsx'
import { LABELS, MANAGED_BY } from '../../contract/api-group.js'
import { objectNameOf } from '../../contract/ids.js'
import { api } from '../integration/helpers/api.js'
import { createKey, kubeConfig } from '../integration/helpers/keys.js'
import { imageRef, NS, OOM_LIMIT } from './chart-values.js'
import { core, kubectl, putFile, runnerPodsOf } from './helpers.js'

/** What only a real node checks: the kernel's memory limit, the Job controller's deadline, NetworkPolicy. */
describe.skipIf(inject('nodeBlocker'))('runner isolation on a real node', () => {
  let key = ''
  beforeAll(async () => {
    key = (await createKey()).key
  })

  it('stops a runner at activeDeadlineSeconds: the container is killed and the job fails as upstream_timeout (504)', async () => {
    // The input never finishes downloading: only the deadline ends this run.
    const answer = api('POST', '/v1/utilities/split-pdf', {
      key,
      body: { input: { url: inject('podFilesUrl').replace(/\/files$/, '/stall') } },
      headers: { 'Dutil-Test-Deadline-Seconds': '5' },
    })
    // Meanwhile the chart's runner quota counts the runner pod, and only runner pods (the
    // gateway's and operator's pods carry no activeDeadlineSeconds: not in its Terminating scope).
    const counted = async () => {
      const quota = await core().readNamespacedResourceQuota({ name: 'dutil-runners', namespace: NS })
      const runners = (
        await core().listNamespacedPod({ namespace: NS, labelSelector: `${LABELS.managedBy}=${MANAGED_BY}` })
      ).items.filter((p) => !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''))
      return { used: Number(quota.status?.used?.pods ?? 0), runners: runners.length, hard: quota.spec?.hard?.pods }
    }
    await expect.poll(async () => (await counted()).used, { timeout: 15_000, interval: 250 }).toBeGreaterThanOrEqual(1)
    const seen = await counted()
    expect(seen.hard).toBe('200')
    expect(seen.used).toBeLessThanOrEqual(seen.runners)
    const res = await answer
    expect(res.status, JSON.stringify(res.body)).toBe(504)
    expect(res.body).toMatchObject({ status: 'failed', error: { code: 'upstream_timeout' } })
    expect(res.body.error.message).toContain('5 s')
    const [job] = (
      await kubeConfig()
        .makeApiClient(BatchV1Api)
        .listNamespacedJob({ namespace: NS, labelSelector: `${LABELS.jobId}=${objectNameOf(res.body.id)}` })
    ).items
    expect(job.spec?.activeDeadlineSeconds).toBe(5)
    expect(job.status?.conditions?.find((c) => c.type === 'Failed' || c.type === 'FailureTarget')?.reason).toBe(
      'DeadlineExceeded',
    )
    // The kubelet killed the container (the Job controller deleted its pod at the deadline).
    await expect
      .poll(
        async () =>
          (await runnerPodsOf(res.body.id)).every((p) => p.metadata?.deletionTimestamp || p.status?.phase === 'Failed'),
        { timeout: 60_000, interval: 500 },
      )
      .toBe(true)
  })

  it(`fails a runner OOM-killed at its memory limit (${OOM_LIMIT}) as upstream_error naming the limit, with one pod and no retry`, async () => {
    const url = await putFile('oom.xls', bigWorkbook())
    const res = await api('POST', '/v1/utilities/xls-to-xlsx', { key, body: { input: { url } } })
    expect(res.status, JSON.stringify(res.body)).toBe(502)
    expect(res.body.error).toMatchObject({ code: 'upstream_error' })
    expect(res.body.error.message).toContain(`its limit is ${OOM_LIMIT}`)
    const pods = await runnerPodsOf(res.body.id)
    expect(pods).toHaveLength(1)
    expect(
      pods[0].status?.containerStatuses?.[0].state?.terminated?.reason ??
        pods[0].status?.containerStatuses?.[0].lastState?.terminated?.reason,
    ).toBe('OOMKilled')
  })

  describe('the runner NetworkPolicy, enforced by kube-router', () => {
    let gatewayPodIp = ''
    const apiServer = inject('apiServerAddress')
    const storage = new URL(inject('storage').endpoint).host
    const services = new URL(inject('filesUrl')).host

    beforeAll(async () => {
      const pods = await core().listNamespacedPod({
        namespace: NS,
        labelSelector: 'app.kubernetes.io/component=gateway',
      })
      gatewayPodIp = pods.items[0].status!.podIP!
    })

    /**
     * Runs a pod in the release namespace (with a runner's labels or without) that tries a TCP
     * connection to each target, 3 s each, and prints which opened; every target is an address
     * on this machine (the node, pods and Services of this test). It waits 6 s first: an
     * iptables-based enforcer applies a policy to a pod only after the pod has its address (the
     * runner's own address policy covers that first moment; docs/security.md).
     */
    async function reachable(name: string, asRunner: boolean, targets: string[]): Promise<Record<string, boolean>> {
      const script = `
        const net = require('node:net')
        const dns = require('node:dns')
        const targets = ${JSON.stringify(targets)}
        const tryOne = (t) => new Promise((done) => {
          const [host, port] = t.split(':')
          const s = net.connect({ host, port: Number(port), timeout: 3000 })
          s.on('connect', () => { s.destroy(); done(true) })
          s.on('timeout', () => { s.destroy(); done(false) })
          s.on('error', () => done(false))
        })
        // kube-router programs a pod's chain once the pod has its address: a moment after start.
        new Promise((r) => setTimeout(r, 6000)).then(() => Promise.all(targets.map(tryOne))).then(async (open) => {
          const resolved = await dns.promises.lookup('kubernetes.default.svc.cluster.local').then(() => true, () => false)
          console.log(JSON.stringify({ ...Object.fromEntries(targets.map((t, i) => [t, open[i]])), dns: resolved }))
        })`
      const labels: Record<string, string> = asRunner
        ? { [LABELS.managedBy]: MANAGED_BY, [LABELS.jobId]: name }
        : { app: name }
      await core().createNamespacedPod({
        namespace: NS,
        body: {
          metadata: { name, labels },
          spec: {
            restartPolicy: 'Never',
            automountServiceAccountToken: false,
            securityContext: { runAsNonRoot: true, runAsUser: 10001 },
            containers: [
              {
                name: 'probe',
                image: imageRef('runner-split-pdf', inject('imageTag')),
                imagePullPolicy: 'Never',
                command: ['node', '-e', script],
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ['ALL'] },
                },
              },
            ],
          },
        },
      })
      await expect
        .poll(async () => (await core().readNamespacedPod({ name, namespace: NS })).status?.phase, {
          timeout: 60_000,
          interval: 500,
        })
        .toBe('Succeeded')
      const out = kubectl(['-n', NS, 'logs', name])
      await core().deleteNamespacedPod({ name, namespace: NS, gracePeriodSeconds: 0 })
      return JSON.parse(out.trim().split('\n').pop()!)
    }

    it("blocks a runner from the API server (Service and address), other pods and the tests' own Service; DNS, storage and allowed networks stay open", async () => {
      const np = inject('npTarget')
      const blocked = ['10.0.0.1:443', apiServer, `${gatewayPodIp}:8080`, `${np.podIp}:8080`, `${np.clusterIp}:80`]
      const open = [storage, services]
      const asRunner = await reachable('np-probe-runner', true, [...blocked, ...open])
      // The same probe without a runner's labels reaches every target: the policy is what blocks.
      const asOther = await reachable('np-probe-other', false, [...blocked, ...open])
      for (const t of blocked) {
        expect(asOther[t], `${t} without the policy`).toBe(true)
        expect(asRunner[t], `${t} from a runner`).toBe(false)
      }
      for (const t of open) expect(asRunner[t], `${t} from a runner`).toBe(true)
      expect(asRunner.dns).toBe(true)
    })
  })

  it("refuses a runner input on a private address outside allowedPrivateNetworks (the runner's own address policy)", async () => {
    const res = await api('POST', '/v1/utilities/split-pdf', {
      key,
      body: { input: { url: 'http://np-target.dutil-test.svc.cluster.local/x.pdf' } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(422)
    expect(res.body.error).toMatchObject({ code: 'upstream_rejected' })
    expect(res.body.error.message).toMatch(/not allowed/)
  })
})

/** A legacy workbook of 40,000 rows × 8 columns (about 3 MB): parsing it takes far more memory than OOM_LIMIT. */
function bigWorkbook(): Buffer {
  const rows = Array.from({ length: 40_000 }, (_, i) => [
    `item ${i}`,
    i,
    i * 1.5,
    `note for row ${i}`,
    i % 7,
    `code-${i % 97}`,
    i * 3,
    `tail ${i}`,
  ])
  const wb = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(
    wb,
    XLSX.utils.aoa_to_sheet([['item', 'n', 'x', 'note', 'd', 'code', 'y', 'tail'], ...rows]),
    'Data',
  )
  return XLSX.write(wb, { type: 'buffer', bookType: 'biff8' }) as Buffer
}
