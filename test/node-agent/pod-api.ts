// The few API calls a pod worker makes, as kubelet would: read the pod, write pods/status
// (merge patch guarded by resourceVersion), the final DELETE (grace 0, UID precondition), the
// objects a pod references and bound service account tokens.
import { type CoreV1Api, PatchStrategy, type V1Pod, setHeaderOptions } from '@kubernetes/client-node'
import { isConflict, isNotFound } from './kube-errors.js'
import { fetchPodObjects, type ObjectReferences, type PodObjects } from './pod-objects.js'
import type { PodStatusJson } from './pod-status.js'

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch)

export interface PodApi {
  /** The pod, or undefined when it no longer exists. */
  readPod(namespace: string, name: string): Promise<V1Pod | undefined>
  /** Fails with 409 Conflict when the pod changed since `resourceVersion` was read. */
  patchPodStatus(namespace: string, name: string, resourceVersion: string, status: PodStatusJson): Promise<void>
  /** Final delete after termination; a pod that is already gone (or replaced) counts as done. */
  finalDelete(namespace: string, name: string, uid: string): Promise<void>
  fetchObjects(namespace: string, refs: ObjectReferences): Promise<PodObjects>
  requestToken(pod: V1Pod, audience: string | undefined, expirationSeconds: number): Promise<string>
}

export function createPodApi(core: CoreV1Api): PodApi {
  return {
    async readPod(namespace, name) {
      try {
        return await core.readNamespacedPod({ name, namespace })
      } catch (err) {
        if (isNotFound(err)) return undefined
        throw err
      }
    },

    async patchPodStatus(namespace, name, resourceVersion, status) {
      await core.patchNamespacedPodStatus(
        { name, namespace, body: { metadata: { resourceVersion }, status } },
        mergePatch,
      )
    },

    async finalDelete(namespace, name, uid) {
      try {
        await core.deleteNamespacedPod({
          name,
          namespace,
          gracePeriodSeconds: 0,
          body: { gracePeriodSeconds: 0, preconditions: { uid } },
        })
      } catch (err) {
        // 404: gone already; 409: the UID precondition failed, so our pod is gone.
        if (isNotFound(err) || isConflict(err)) return
        throw err
      }
    },

    fetchObjects: (namespace, refs) => fetchPodObjects(core, namespace, refs),

    async requestToken(pod, audience, expirationSeconds) {
      const res = await core.createNamespacedServiceAccountToken({
        name: pod.spec?.serviceAccountName || 'default',
        namespace: pod.metadata?.namespace ?? '',
        body: {
          spec: {
            audiences: audience ? [audience] : [],
            expirationSeconds,
            boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name, uid: pod.metadata?.uid },
          },
        },
      })
      const token = res.status?.token
      if (!token) throw new Error('TokenRequest returned no token')
      return token
    },
  }
}
