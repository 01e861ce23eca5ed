import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node'
import { API_GROUP, API_VERSION, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { apiStatus } from './kube.js'
import { requestRedelivery } from './callback-redelivery.js'

/** The calls a program makes to the API server about UtilityJobs. */
export type UtilityJobCalls = Pick<
  CustomObjectsApi,
  | 'getNamespacedCustomObject'
  | 'createNamespacedCustomObject'
  | 'patchNamespacedCustomObject'
  | 'deleteNamespacedCustomObject'
  | 'replaceNamespacedCustomObjectStatus'
>

/**
 * UtilityJobs on the API server, typed: the one place that names their group, version and
 * plural, and turns the API server's answers into UtilityJobResource (the gateway creates and
 * patches them, the operator writes their status, removes its finalizer and deletes them).
 */
export class UtilityJobClient {
  constructor(
    private readonly custom: UtilityJobCalls,
    readonly namespace: string,
  ) {}

  private coords() {
    return { group: API_GROUP, version: API_VERSION, namespace: this.namespace, plural: UTILITY_JOB.plural }
  }

  /** The UtilityJob from the API server; undefined when it does not exist. */
  async get(name: string): Promise<UtilityJobResource | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({ ...this.coords(), name })) as UtilityJobResource
    } catch (err) {
      if (apiStatus(err) === 404) return undefined
      throw err
    }
  }

  async create(job: UtilityJobResource): Promise<UtilityJobResource> {
    return (await this.custom.createNamespacedCustomObject({ ...this.coords(), body: job })) as UtilityJobResource
  }

  async patchSpec(name: string, spec: Record<string, unknown>): Promise<UtilityJobResource> {
    return (await this.custom.patchNamespacedCustomObject(
      { ...this.coords(), name, body: { spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as UtilityJobResource
  }

  /**
   * Replaces the status subresource (optimistic concurrency: the body's resourceVersion); the
   * object as written, or null when it changed meanwhile (409).
   */
  async replaceStatus(body: UtilityJobResource): Promise<UtilityJobResource | null> {
    try {
      return (await this.custom.replaceNamespacedCustomObjectStatus({
        ...this.coords(),
        name: body.metadata.name,
        body,
      })) as UtilityJobResource
    } catch (err) {
      if (apiStatus(err) === 409) return null
      throw err
    }
  }

  /** Deletes the UtilityJob (its children go in the background); false when it was gone already. */
  async delete(name: string): Promise<boolean> {
    try {
      await this.custom.deleteNamespacedCustomObject({ ...this.coords(), name, propagationPolicy: 'Background' })
      return true
    } catch (err) {
      if (apiStatus(err) === 404) return false
      throw err
    }
  }

  /**
   * Removes one finalizer, provided the object is still the version read (else it throws, to be
   * read again); false when the object was gone already.
   */
  async removeFinalizer(uj: UtilityJobResource, finalizer: string): Promise<boolean> {
    try {
      await this.custom.patchNamespacedCustomObject(
        {
          ...this.coords(),
          name: uj.metadata.name,
          body: {
            metadata: {
              finalizers: (uj.metadata.finalizers ?? []).filter((f) => f !== finalizer),
              resourceVersion: uj.metadata.resourceVersion,
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
      return true
    } catch (err) {
      const code = apiStatus(err)
      if (code === 404) return false
      if (code === 409) throw new Error('the UtilityJob changed while its finalizer was being removed; trying again')
      throw err
    }
  }

  /** Asks the operator to send the job's callback again (platform/callback-redelivery.ts); returns the request's time. */
  requestRedelivery(name: string): Promise<string> {
    return requestRedelivery(this.custom, this.namespace, name)
  }
}
