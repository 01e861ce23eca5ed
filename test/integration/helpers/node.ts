import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node'
import { kubeConfig } from './keys.js'

/**
 * Runs `fn` with the node cordoned (as `kubectl cordon` does): the scheduler binds no new
 * pods, so new jobs stay queued. Always uncordons afterwards.
 */
export async function whileCordoned<T>(fn: () => Promise<T>): Promise<T> {
  const core = kubeConfig().makeApiClient(CoreV1Api)
  const [node] = (await core.listNode()).items
  const set = (unschedulable: boolean) =>
    core.patchNode(
      { name: node.metadata!.name!, body: { spec: { unschedulable } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )
  await set(true)
  try {
    return await fn()
  } finally {
    await set(false)
  }
}
