import { describe, expect, it } from 'vitest'
import { staleTestImages } from './real-node.js'

describe('staleTestImages', () => {
  const names = ['ghcr.io/dutil/dutil-gateway:test-aaaa000001', 'ghcr.io/dutil/dutil-runner-split-pdf:test-aaaa000001']

  it('names the store’s test tags of our repositories that the engine no longer has', () => {
    const store = [
      'ghcr.io/dutil/dutil-gateway:test-aaaa000001',
      'ghcr.io/dutil/dutil-gateway:test-bbbb000002',
      'ghcr.io/dutil/dutil-gateway:test-cccc000003',
      'ghcr.io/dutil/dutil-runner-split-pdf:test-bbbb000002',
    ]
    const inEngine = new Set([...names, 'ghcr.io/dutil/dutil-gateway:test-cccc000003'])
    expect(staleTestImages(store, names, inEngine)).toEqual([
      'ghcr.io/dutil/dutil-gateway:test-bbbb000002',
      'ghcr.io/dutil/dutil-runner-split-pdf:test-bbbb000002',
    ])
  })

  it('leaves release tags, other repositories and the node’s own images alone', () => {
    const store = [
      'ghcr.io/dutil/dutil-gateway:0.1.0',
      'ghcr.io/dutil/dutil-gateway:latest',
      'registry.k8s.io/pause:3.10',
      'ghcr.io/other/dutil-gateway:test-bbbb000002',
      'localhost/test-services:test-bbbb000002',
    ]
    expect(staleTestImages(store, names, new Set(names))).toEqual([])
  })
})
