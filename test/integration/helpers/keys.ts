import { KubeConfig } from '@kubernetes/client-node'
import { inject } from 'vitest'
import { ApiKeyAdmin, type CreateKeyOptions, type CreatedKey } from '../../../contract/api-key-admin.js'

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
  return keyAdmin().create({ name: opts.name ?? `test-${Math.random().toString(36).slice(2, 8)}`, utilities: opts.utilities ?? [], ...opts })
}

/** How many runner pods a job has had (1 means no retry). */
export async function runnerPods(jobId: string): Promise<number> {
  const { CoreV1Api } = await import('@kubernetes/client-node')
  const { LABELS } = await import('../../../contract/api-group.js')
  const { objectNameOf } = await import('../../../contract/ids.js')
  const pods = await kubeConfig().makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'dutil', labelSelector: `${LABELS.jobId}=${objectNameOf(jobId)}` })
  return pods.items.length
}
