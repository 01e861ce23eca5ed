import { execFile } from 'node:child_process'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, inject, it } from 'vitest'
import { createKey } from './helpers/keys.js'

const st = join(process.env.DUTIL_CACHE ?? join(homedir(), '.cache', 'dutil'), 'venv', 'bin', 'st')

describe('schemathesis against the running gateway', () => {
  it('finds no 5xx and no response that breaks the documented schema', async () => {
    const { key } = await createKey({ name: 'fuzz', rateLimitPerMinute: 1_000_000 })
    const checks = [
      'not_a_server_error',
      'status_code_conformance',
      'content_type_conformance',
      'response_schema_conformance',
      'response_headers_conformance',
      'negative_data_rejection',
    ]
    const args = [
      'run',
      `${inject('gatewayUrl')}/v1/openapi.json`,
      '-H',
      `Authorization: Bearer ${key}`,
      '--checks',
      checks.join(','),
      '--max-examples',
      '20',
      '--seed',
      '20261122',
      // A sync run may take up to the gateway's wait (90 s) before it answers, as the API says.
      '--request-timeout',
      '100',
      '--suppress-health-check',
      'all',
      '--no-color',
      // Two requests at a time: the run takes about three quarters of its time alone (74 s against
      // 97 s on the 2-core VM); more workers gain little there, the machine's CPU is the bound.
      '--workers',
      '2',
    ]
    const result = await promisify(execFile)(st, args, { maxBuffer: 16 * 1024 * 1024, timeout: 600_000 }).catch(
      (err: { stdout?: string; stderr?: string; code?: number }) => err,
    )
    const out = `${result.stdout ?? ''}${result.stderr ?? ''}`
    expect(out, out.slice(-6000)).toMatch(/\d+ generated, \d+ passed/)
    expect(out, out.slice(-6000)).not.toMatch(/failed|Failures:/)
  }, 600_000)
})
