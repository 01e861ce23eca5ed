import { KubeConfig } from '@kubernetes/client-node'
import { inject } from 'vitest'
import { ApiKeyAdmin, type CreateKeyOptions, type CreatedKey } from '../../../platform/api-key-admin.js'

export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig()
  kc.loadFromFile(inject('kubeconfigPath'))
  return kc
}

export function keyAdmin(): ApiKeyAdmin {
  return new ApiKeyAdmin(kubeConfig(), 'dutil')
}

/** A fresh API key per test, so tests never see each other's jobs. */
export function createKey(opts: Partial<CreateKeyOptions> = {}): Promise<CreatedKey> {
  return keyAdmin().create({
    name: opts.name ?? `test-${Math.random().toString(36).slice(2, 8)}`,
    utilities: opts.utilities ?? [],
    ...opts,
  })
}

/** How many runner pods a job has had (1 means no retry). */
export async function runnerPods(jobId: string): Promise<number> {
  const { CoreV1Api } = await import('@kubernetes/client-node')
  const { LABELS } = await import('../../../contract/api-group.js')
  const { objectNameOf } = await import('../../../contract/ids.js')
  const pods = await kubeConfig()
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace: 'dutil', labelSelector: `${LABELS.jobId}=${objectNameOf(jobId)}` })
  return pods.items.length
}

/**
 * A kubeconfig acting as a user that holds only `rules` in the dutil namespace (the admin
 * impersonates it, as `kubectl --as` does): for failures part-way through a multi-object change.
 */
export async function kubeConfigWithOnly(
  rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>,
): Promise<KubeConfig> {
  const { RbacAuthorizationV1Api } = await import('@kubernetes/client-node')
  const admin = kubeConfig()
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api)
  const user = `limited-${Math.random().toString(36).slice(2, 8)}`
  await rbac.createNamespacedRole({ namespace: 'dutil', body: { metadata: { name: user }, rules } })
  await rbac.createNamespacedRoleBinding({
    namespace: 'dutil',
    body: {
      metadata: { name: user },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: user },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    },
  })
  const limited = new KubeConfig()
  limited.loadFromOptions({
    clusters: admin.clusters,
    users: admin.users.map((u) => ({ ...u, impersonateUser: user })),
    contexts: admin.contexts,
    currentContext: admin.currentContext,
  })
  return limited
}
