import { join } from 'node:path'
import { REPO_ROOT } from '../platform/platform.js'
import { NODE_IP } from '../real-node/real-node.js'

export const CHART = join(REPO_ROOT, 'charts', 'dutil')
export const RELEASE = 'dutil'
export const NS = 'dutil'
const REGISTRY = process.env.DUTIL_IMAGE_REGISTRY ?? 'ghcr.io/dutil'

/** An image as images/build-images.sh tags it and the chart names it. */
export const imageRef = (name: string, tag: string) => `${REGISTRY}/dutil-${name}:${tag}`

/** The chart's profile for Chromium's sandbox, relative to the kubelet's seccomp directory. */
export const SANDBOX_PROFILE = 'dutil/chromium-sandbox-seccomp.json'

/** The utilities whose runner starts Chromium. */
export const BROWSER_UTILITIES = ['html-pdf', 'html-image']

/**
 * html-pdf and html-image with Chromium's own sandbox, under the chart's seccomp profile where the
 * node's set-up put it (test/real-node: <kubelet root>/seccomp/dutil/): `--set` values for
 * upgradeRelease.
 */
export const BROWSER_SANDBOX_VALUES = BROWSER_UTILITIES.flatMap((u) => [
  `runners.${u}.pod.browserSandbox=true`,
  `runners.${u}.pod.seccompProfile.type=Localhost`,
  `runners.${u}.pod.seccompProfile.localhostProfile=${SANDBOX_PROFILE}`,
])

/** A memory limit far below what converting the OOM test's workbook needs: that run ends OOMKilled on the node. */
export const OOM_LIMIT = '64Mi'

/**
 * The chart's values on the real node: the images built here (never pulled), the platform's
 * storage, Redis and PostgreSQL at the node's address, two replicas of each program, and the
 * runner NetworkPolicy with storage the one private destination allowed.
 */
export function chartValues(o: {
  tag: string
  storage: { endpoint: string; bucket: string }
  redisUrl: string
  allowedPrivateNetworks: string[]
  trustedCaConfigMap: string
}): string[] {
  const minioPort = Number(new URL(o.storage.endpoint).port)
  return [
    '--set',
    `image.registry=${REGISTRY}`,
    '--set',
    `image.tag=${o.tag}`,
    '--set',
    'image.pullPolicy=IfNotPresent',
    // The services the test platform runs on this host, as a production install names its own.
    '--set',
    'storage.type=external',
    '--set',
    'database.type=external',
    '--set',
    'redis.type=external',
    '--set',
    `storage.endpoint=${o.storage.endpoint}`,
    '--set',
    'storage.existingSecret=dutil-storage',
    '--set',
    `storage.bucket=${o.storage.bucket}`,
    '--set',
    `redis.url=${o.redisUrl}/0`,
    '--set',
    'database.existingSecret=dutil-database',
    '--set',
    'gateway.replicas=2',
    // Gotenberg's routes, as a platform team turns them on (test/node/gotenberg-clients.test.ts).
    '--set',
    'gateway.gotenbergRoutes.enabled=true',
    '--set',
    'operator.replicas=2',
    // One 2-core node holds everything: small CPU requests, so a rolling upgrade's extra pods are
    // never left Pending behind a burst of runners (make test runs the integration tests beside).
    '--set-json',
    'gateway.resources={"requests":{"cpu":"50m","memory":"128Mi"},"limits":{"cpu":"1","memory":"512Mi"}}',
    '--set-json',
    'operator.resources={"requests":{"cpu":"50m","memory":"128Mi"},"limits":{"cpu":"1","memory":"512Mi"}}',
    '--set-json',
    'runners.split-pdf={"resources":{"requests":{"cpu":"100m","memory":"256Mi"},"limits":{"cpu":"1","memory":"2Gi"}},"concurrency":4}',
    // Short grace periods keep the rolling upgrade quick; the preStop sleep stays (Endpoints catch up).
    '--set',
    'gateway.preStopSleepSeconds=2',
    // kube-router 1.3 (the enforcer here) refuses IPv6 CIDRs; this cluster is IPv4-only.
    '--set-json',
    'networkPolicy.ipFamilies=["IPv4"]',
    '--set-json',
    `networkPolicy.storageEgress=[{"to":[{"ipBlock":{"cidr":"${NODE_IP}/32"}}],"ports":[{"protocol":"TCP","port":${minioPort}}]}]`,
    // The per-request deadline header (Dutil-Test-Deadline-Seconds) drives the deadline test.
    '--set-json',
    'gateway.extraEnv=[{"name":"DUTIL_TEST_HOOKS","value":"true"}]',
    '--set-json',
    `allowedPrivateNetworks=${JSON.stringify(o.allowedPrivateNetworks)}`,
    '--set',
    `trustedCaBundle.configMap=${o.trustedCaConfigMap}`,
    '--set-json',
    `runners.xls-to-xlsx.resources={"requests":{"cpu":"100m","memory":"32Mi"},"limits":{"cpu":"1","memory":"${OOM_LIMIT}"}}`,
  ]
}
