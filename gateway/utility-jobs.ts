import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node'
import { API_GROUP, API_VERSION, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { apiStatus } from '../platform/kube.js'
import { requestRedelivery } from '../platform/callback-redelivery.js'

/** The gateway's calls to the API server about UtilityJobs: create, read one, patch the spec. */
export class UtilityJobClient {
  constructor(
    private readonly custom: CustomObjectsApi,
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

  /** Asks the operator to send the job's callback again (platform/callback-redelivery.ts); returns the request's time. */
  requestRedelivery(name: string): Promise<string> {
    return requestRedelivery(this.custom, this.namespace, name)
  }
}
