// A pod that cannot be started yet because something it references is missing or unsupported.
// Like kubelet, the agent keeps such a pod Pending (container waiting with `reason`) and retries.
export class PodConfigError extends Error {
  constructor(
    message: string,
    /** Container waiting reason: CreateContainerConfigError for env, ContainerCreating for volumes, ErrImagePull/ImagePullBackOff for an image the node does not have. */
    readonly reason:
      | 'CreateContainerConfigError'
      | 'ContainerCreating'
      | 'ErrImagePull'
      | 'ImagePullBackOff' = 'CreateContainerConfigError',
  ) {
    super(message)
    this.name = 'PodConfigError'
  }
}
