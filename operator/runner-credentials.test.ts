import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { newId } from '../contract/ids.js'
import type { RunnerCredentials } from '../contract/runner-protocol.js'
import { GrantRefused, type PolicyDocument } from '../contract/storage-grant.js'
import { keyTenant, tenantCode } from '../contract/tenants.js'
import { catalog, UTILITIES } from '../runners/catalog.js'
import { tenantCredentialIssuer, type AssumeRole, type IssueCredentials } from './runner-credentials.js'

const NOW = Date.parse('2026-11-30T10:00:00.000Z')
const split = catalog.get('split-pdf')!

function job(keyId: string, coded = true, storageInputKeys?: string[]): UtilityJobResource {
  const jobId = newId('job', NOW, coded ? tenantCode(keyTenant(keyId)) : undefined)
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name: jobId.replace('_', '-').toLowerCase(), namespace: 'dutil' },
    spec: {
      jobId,
      utility: 'split-pdf',
      mode: 'sync',
      apiKeyId: keyId,
      apiKeyName: 'k',
      createdAt: new Date(NOW).toISOString(),
      ...(storageInputKeys ? { storageInputKeys } : {}),
      metadata: null,
    },
  } as UtilityJobResource
}

/** A tenant issuer over a fake STS: what it was asked for, and a clock to move. */
function issuer(answer: (policy: PolicyDocument) => Promise<RunnerCredentials> | RunnerCredentials = () => creds('t')) {
  const asked: PolicyDocument[] = []
  const perJob: string[] = []
  const counts: string[] = []
  const clock = { now: NOW }
  const assume: AssumeRole = async (policy) => {
    asked.push(policy)
    return answer(policy)
  }
  const own: IssueCredentials = async (uj) => {
    perJob.push(uj.spec.jobId)
    return creds('own')
  }
  const issue = tenantCredentialIssuer({
    assume,
    bucket: 'dutil',
    utilities: UTILITIES.map((u) => u.slug),
    perJob: own,
    now: () => clock.now,
    counted: (scope, source) => counts.push(`${scope}/${source}`),
  })
  return { issue, asked, perJob, counts, clock }
}

const creds = (accessKey: string): RunnerCredentials => ({
  accessKey,
  secretKey: 's',
  sessionToken: 't',
  expiresAt: new Date(NOW + 3_600_000).toISOString(),
})

describe('tenantCredentialIssuer', () => {
  it("asks storage once per tenant and utility; the tenant's next jobs reuse the grant", async () => {
    const t = issuer()
    await Promise.all([t.issue(job('key_a'), split), t.issue(job('key_a'), split)])
    await t.issue(job('key_a'), split)
    expect(t.asked).toHaveLength(1)
    await t.issue(job('key_b'), split)
    expect(t.asked).toHaveLength(2)
    expect(t.counts).toEqual(['tenant/issued', 'tenant/reused', 'tenant/reused', 'tenant/issued'])
    expect(t.perJob).toEqual([])
    // The grant names the tenant's code, not a job.
    expect(JSON.stringify(t.asked[0])).toContain(tenantCode(keyTenant('key_a')))
    expect(JSON.stringify(t.asked[0])).not.toContain(tenantCode(keyTenant('key_b')))
  })

  it('a job the grant does not cover takes its own: an id without the code, an input of another tenant', async () => {
    const t = issuer()
    const uncoded = job('key_a', false)
    const foreign = job('key_a', true, [`split-pdf/2026-11-30/${job('key_b').spec.jobId}/page-1.pdf`])
    expect((await t.issue(uncoded, split)).accessKey).toBe('own')
    expect((await t.issue(foreign, split)).accessKey).toBe('own')
    expect(t.perJob).toEqual([uncoded.spec.jobId, foreign.spec.jobId])
    expect(t.asked).toHaveLength(0)
    expect(t.counts).toEqual(['job/issued', 'job/issued'])
  })

  it('asks again once less than a job’s session is left on the grant', async () => {
    const t = issuer()
    await t.issue(job('key_a'), split)
    t.clock.now += 11 * 3_600_000
    await t.issue(job('key_a'), split)
    expect(t.asked).toHaveLength(1)
    t.clock.now += 50 * 60_000
    await t.issue(job('key_a'), split)
    expect(t.asked).toHaveLength(2)
  })

  it("a refused grant sends the tenant's jobs to grants of their own, and is not asked for again soon", async () => {
    const t = issuer(() => {
      throw new GrantRefused('Storage refused the job’s access grant (MalformedPolicy).')
    })
    expect((await t.issue(job('key_a'), split)).accessKey).toBe('own')
    expect((await t.issue(job('key_a'), split)).accessKey).toBe('own')
    expect(t.asked).toHaveLength(1)
    t.clock.now += 11 * 60_000
    await t.issue(job('key_a'), split)
    expect(t.asked).toHaveLength(2)
  })

  it('storage out of reach fails the pass (it is retried) and is asked again at the next job', async () => {
    let down = true
    const t = issuer(() => {
      if (down) throw new Error('connect ECONNREFUSED')
      return creds('t')
    })
    await expect(t.issue(job('key_a'), split)).rejects.toThrow(/ECONNREFUSED/)
    down = false
    expect((await t.issue(job('key_a'), split)).accessKey).toBe('t')
    expect(t.asked).toHaveLength(2)
  })
})
