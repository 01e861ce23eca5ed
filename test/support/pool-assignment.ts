import type { PoolAssignment } from '../../contract/runner-protocol.js'

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
