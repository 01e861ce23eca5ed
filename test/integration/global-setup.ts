import { writeSync } from 'node:fs'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { REPO_ROOT, startPlatform, TEST_PORTS, type Platform } from '../platform/platform.js'
import { startIdentityProvider, type TestIdentityProvider } from '../support/oidc-provider.js'
import { makeTestCa, type TestCa } from '../support/test-ca.js'

declare module 'vitest' {
  export interface ProvidedContext {
    gatewayUrl: string
    kubeconfigPath: string
    platformDir: string
    storage: { endpoint: string; accessKey: string; secretKey: string; bucket: string; region: string }
    redisUrl: string
    /** The job record's PostgreSQL (the platform's own server). */
    databaseUrl: string
    programEnv: Record<string, string>
    /** Files of the https callback receivers' certificate (signed by the test CA the operator trusts). */
    callbackTls: { certFile: string; keyFile: string; caFile: string }
    /** The real OpenID provider the console signs in with (domain example.org is allowed). */
    oidcIssuer: string
    /** Jaeger's query API: every job of the suite is traced into it. */
    tracesUrl: string
  }
}

let platform: Platform | undefined
let testCa: TestCa | undefined
let idp: TestIdentityProvider | undefined

/**
 * The test process exiting without its teardown (process.exit from anywhere, or vitest's own
 * SIGTERM handling) would leave the platform running, holding the ports the next run needs:
 * kill it at once, and say who called exit (make test's faults phase once ended so, silently).
 */
function exitBeforeTeardown(code: number): void {
  Error.stackTraceLimit = 40
  writeSync(
    2,
    `\n[platform] the test process is exiting (code ${code}) before its teardown ran; stopping the platform now. Exit called from:\n${new Error('exit').stack}\n`,
  )
  platform?.killNow()
}

/** E-mail domain whose verified provider accounts become Members on first sign-in. */
export const OIDC_ALLOWED_DOMAIN = 'example.org'

/** Starts the real platform once per test run, on the test ports, from empty state. */
export async function setup(project: TestProject): Promise<void> {
  const started = Date.now()
  // Callback receivers in tests are https servers on loopback with a certificate from this CA;
  // the platform's programs inherit the environment, so the operator trusts it.
  testCa = makeTestCa()
  process.env.NODE_EXTRA_CA_CERTS = testCa.caFile
  // The console's identity provider: a real OpenID provider on loopback, trusted through the same CA.
  idp = await startIdentityProvider({
    cert: testCa.cert,
    key: testCa.key,
    redirectUri: `http://127.0.0.1:${TEST_PORTS.gateway}/console/api/oidc/callback`,
  })
  platform = await startPlatform({
    tracing: true,
    gatewayEnv: {
      DUTIL_OIDC_ISSUER: idp.issuer,
      DUTIL_OIDC_CLIENT_ID: idp.clientId,
      DUTIL_OIDC_CLIENT_SECRET: idp.clientSecret,
      DUTIL_OIDC_ALLOWED_DOMAINS: OIDC_ALLOWED_DOMAIN,
      DUTIL_OIDC_DISPLAY_NAME: 'Test IdP',
      // A trickled body is cut off after 10 s instead of 30 (security.test.ts waits for it).
      DUTIL_REQUEST_TIMEOUT_SECONDS: '10',
      // The tests stand in for an ingress controller on loopback: they send X-Forwarded-For to act
      // as people at other addresses (security.test.ts checks that nobody else may).
      DUTIL_TRUSTED_PROXIES: '127.0.0.1/32',
      // Console requests before sign-in per address and minute (security.test.ts goes past it).
      DUTIL_CONSOLE_ANONYMOUS_REQUESTS_PER_MINUTE: '300',
    },
    // DUTIL_TEST_DIR (with DUTIL_TEST_PORT_OFFSET): a second platform beside this one (make test's fault tests).
    dir: join(REPO_ROOT, process.env.DUTIL_TEST_DIR ?? '.test'),
    ports: TEST_PORTS,
    fresh: true,
    // Test fixtures are served from loopback; the strict policy has its own unit tests.
    allowLoopbackUrls: true,
    testHooks: true,
    syncWaitSeconds: 90,
    // Eight callback attempts in about 13 s instead of 21 minutes (one test restores the real schedule).
    callbackDelayScale: 0.01,
    progress: (m) => process.stdout.write(`[platform] ${m}\n`),
  })
  // First among the 'exit' listeners: vitest's own calls process.exit again, which skips the rest.
  process.prependListener('exit', exitBeforeTeardown)
  process.stdout.write(`[platform] up in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
  project.provide('gatewayUrl', platform.gatewayUrl)
  project.provide('kubeconfigPath', platform.kubeconfigPath)
  project.provide('platformDir', platform.dir)
  project.provide('storage', platform.storage)
  project.provide('redisUrl', platform.redisUrl)
  project.provide('databaseUrl', platform.databaseUrl)
  project.provide('programEnv', platform.programEnv as Record<string, string>)
  project.provide('oidcIssuer', idp.issuer)
  project.provide('tracesUrl', platform.tracesUrl!)
  project.provide('callbackTls', { certFile: testCa.certFile, keyFile: testCa.keyFile, caFile: testCa.caFile })
}

export async function teardown(): Promise<void> {
  process.off('exit', exitBeforeTeardown)
  await platform?.stop()
  await idp?.stop()
  testCa?.remove()
}
