import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface TestCa {
  dir: string
  /** PEM file of the CA: what NODE_EXTRA_CA_CERTS points at. */
  caFile: string
  /** A server certificate for `localhost`, 127.0.0.1 / ::1 and the extra names asked for, signed by the CA. */
  certFile: string
  keyFile: string
  ca: Buffer
  cert: Buffer
  key: Buffer
  remove(): void
}

/**
 * A throwaway certificate authority and a loopback server certificate made with openssl, so
 * https receivers in tests are trusted the way a real one would be (no verification turned off).
 */
export function makeTestCa(prefix = 'dutil-test-ca-', extraNames: string[] = []): TestCa {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const f = (name: string) => join(dir, name)
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] })
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=dutil test CA',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
  )
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
  )
  writeFileSync(
    f('server.ext'),
    `subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1${extraNames.map((n) => `,DNS:${n}`).join('')}\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n`,
  )
  openssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    f('server.ext'),
    '-out',
    f('server.crt'),
  )
  return {
    dir,
    caFile: f('ca.crt'),
    certFile: f('server.crt'),
    keyFile: f('server.key'),
    ca: readFileSync(f('ca.crt')),
    cert: readFileSync(f('server.crt')),
    key: readFileSync(f('server.key')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}
