import type { PoolAssignment } from '../../contract/runner-protocol.js'
import type { PoolSettings } from '../../runners/common/pool-runner.js'

/** A pool runner's assignment for unit tests; override what a test looks at. */
export const poolAssignment = (over: Partial<PoolAssignment> = {}): PoolAssignment => ({
  jobId: 'job_01',
  utility: 'html-pdf',
  createdAt: '2026-11-26T10:00:00.000Z',
  tenant: 'tenant-a',
  deadlineSeconds: 60,
  credentials: { accessKey: 'a', secretKey: 's', sessionToken: 't', expiresAt: '' },
  ...over,
})

/** A pool runner's settings for unit tests; override what a test looks at. */
export const poolSettings = (over: Partial<PoolSettings> = {}): PoolSettings => ({
  token: 'x'.repeat(32),
  port: 0,
  restartEvery: 3,
  idleSeconds: 60,
  base: {
    outbound: { allowLoopback: false, allowedNetworks: [] } as never,
    terminationMessagePath: '/dev/null',
    storage: { endpoint: 'http://storage', region: 'us-east-1', bucket: 'b' },
  },
  ...over,
})
