import type { AddressInfo } from 'node:net'
import type { V1Pod } from '@kubernetes/client-node'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { POOL } from '../contract/runner-protocol.js'
import { PoolRunner } from '../runners/common/pool-runner.js'
import { poolServer } from '../runners/common/pool-server.js'
import type { JobOutcome } from '../runners/common/run-utility.js'
import { poolAssignment, poolSettings } from '../test/support/pool-assignment.js'
import { RUNNER_CONTAINER } from './desired-job.js'
import { httpPoolClient } from './pool-client.js'

const TOKEN = 't'.repeat(40)
const settings = poolSettings({ token: TOKEN, restartEvery: 10 })
const pod: V1Pod = {
  metadata: { name: 'dutil-pool-html-pdf-abcdefgh' },
  spec: { containers: [{ name: RUNNER_CONTAINER, env: [{ name: POOL.tokenEnv, value: TOKEN }] }] },
  status: { podIP: '127.0.0.1' },
}

describe("the operator's pool client against a pool runner's server", () => {
  const servers: Array<{ close(): void }> = []
  afterEach(() => servers.splice(0).forEach((s) => s.close()))

  async function started() {
    const finishes: Array<(o: JobOutcome) => void> = []
    const runner = new PoolRunner(
      {
        start: async () => {},
        run: () => new Promise<JobOutcome>((r) => finishes.push(r)),
        abort: () => {},
        kept: () => [],
      },
      settings,
      pino({ level: 'silent' }),
      { exit: () => {}, scratch: { make: async () => 'scratch', remove: async () => {} } },
    )
    await runner.start()
    const server = poolServer(runner, settings, pino({ level: 'silent' }))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    servers.push(server)
    return { client: httpPoolClient(3_000, (server.address() as AddressInfo).port), finishes }
  }

  it('hands a job over, and a long poll answers at the job’s end', async () => {
    const { client, finishes } = await started()
    expect(await client.assign(pod, poolAssignment({ jobId: 'job_lp' }))).toBe('taken')
    expect(await client.state(pod, 'job_lp')).toEqual({ jobId: 'job_lp', state: 'running' })
    let answer: unknown
    const polled = client.state(pod, 'job_lp', 5_000).then((a) => (answer = a))
    await new Promise((r) => setTimeout(r, 200))
    expect(answer).toBeUndefined() // still running: the answer waits
    finishes[0]({ ok: false, failure: { code: 'upstream_rejected', message: 'no' }, exitCode: 10 })
    await polled
    expect(answer).toEqual({
      jobId: 'job_lp',
      state: 'failed',
      failure: { code: 'upstream_rejected', message: 'no' },
    })
  })

  it('answers a long poll that outlasts its wait with the running state, and an unknown job at once', async () => {
    const { client } = await started()
    expect(await client.assign(pod, poolAssignment({ jobId: 'job_slow' }))).toBe('taken')
    expect(await client.state(pod, 'job_slow', 300)).toEqual({ jobId: 'job_slow', state: 'running' })
    expect(await client.state(pod, 'job_other', 5_000)).toBe('unknown')
    const stranger = { ...pod, spec: { containers: [{ name: RUNNER_CONTAINER, env: [] }] } }
    expect(await client.state(stranger, 'job_slow', 5_000)).toBe('unreachable') // no token: not asked
  })
})
