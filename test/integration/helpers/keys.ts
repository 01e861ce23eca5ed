import { KubeConfig } from '@kubernetes/client-node'
import { inject } from 'vitest'
import { ApiKeyAdmin, type CreateKeyOptions, type CreatedKey } from '../../../cli/api-key-admin.js'

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
