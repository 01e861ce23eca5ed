import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { DutilClient, describeFailure } from './index.js'

describe('a failed request names its cause', () => {
  it('a refused connection: the address and port, from a real fetch to a closed loopback port', async () => {
    // A port that was free a moment ago and now has nobody listening.
    const server = createServer()
    const port = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
    )
    await new Promise((r) => server.close(r))
    const client = new DutilClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'du_live_x', maxRetries: 0 })
    await expect(client.get('job_01ARZ3NDEKTSV4RRFFQ69G5FAV')).rejects.toThrow(
      `could not be reached: fetch failed (connect ECONNREFUSED 127.0.0.1:${port})`,
    )
  })

  it('an unknown host, a certificate problem with its subject, and every address tried', () => {
    const failed = (cause: unknown) => Object.assign(new TypeError('fetch failed'), { cause })
    expect(
      describeFailure(
        failed(Object.assign(new Error('getaddrinfo ENOTFOUND api.example.test'), { code: 'ENOTFOUND' })),
      ),
    ).toBe('fetch failed (getaddrinfo ENOTFOUND api.example.test)')
    expect(
      describeFailure(
        failed(
          Object.assign(new Error("Hostname/IP does not match certificate's altnames"), {
            code: 'ERR_TLS_CERT_ALTNAME_INVALID',
            cert: { subject: { CN: 'other.example.test' } },
          }),
        ),
      ),
    ).toBe(
      "fetch failed (Hostname/IP does not match certificate's altnames; ERR_TLS_CERT_ALTNAME_INVALID; certificate subject CN=other.example.test)",
    )
    expect(
      describeFailure(
        failed(
          Object.assign(
            new AggregateError(
              [new Error('connect ECONNREFUSED ::1:9'), new Error('connect ECONNREFUSED 127.0.0.1:9')],
              '',
            ),
            {
              code: 'ECONNREFUSED',
            },
          ),
        ),
      ),
    ).toBe('fetch failed (connect ECONNREFUSED ::1:9; connect ECONNREFUSED 127.0.0.1:9)')
    expect(describeFailure(new Error('plain'))).toBe('plain')
  })
})
