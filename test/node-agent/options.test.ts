import { describe, expect, it } from 'vitest'
import { imagePresent, parseOptions, UsageError } from './options.js'

describe('parseOptions', () => {
  it('applies defaults relative to the working directory', () => {
    expect(parseOptions(['--kubeconfig', 'kc.yaml'], {}, '/repo')).toEqual({
      kubeconfig: '/repo/kc.yaml',
      nodeName: 'dutil-dev-node',
      workDir: '/repo/.dev/node-agent/dutil-dev-node',
      imageRoot: '/repo',
      images: ['*'],
    })
  })

  it('prefers flags over environment variables', () => {
    const opts = parseOptions(
      [
        '--kubeconfig=/k',
        '--node-name',
        'n1',
        '--work-dir',
        '/w',
        '--image-root',
        '/img',
        '--images',
        'a/*:dev, b/c:1',
      ],
      { KUBECONFIG: '/other', DUTIL_NODE_NAME: 'n2' },
      '/repo',
    )
    expect(opts).toEqual({
      kubeconfig: '/k',
      nodeName: 'n1',
      workDir: '/w',
      imageRoot: '/img',
      images: ['a/*:dev', 'b/c:1'],
    })
  })

  it('falls back to environment variables', () => {
    const opts = parseOptions([], { KUBECONFIG: '/k', DUTIL_NODE_NAME: 'n2', DUTIL_NODE_WORK_DIR: 'w' }, '/repo')
    expect(opts).toMatchObject({ kubeconfig: '/k', nodeName: 'n2', workDir: '/repo/w' })
  })

  it('rejects a missing kubeconfig, unknown flags and bad node names', () => {
    expect(() => parseOptions([], {}, '/repo')).toThrow(UsageError)
    expect(() => parseOptions(['--kubeconfig', 'k', '--nope'], {}, '/repo')).toThrow(UsageError)
    expect(() => parseOptions(['--kubeconfig', 'k', '--node-name', 'Bad_Name'], {}, '/repo')).toThrow(UsageError)
  })
})

describe('imagePresent', () => {
  it('matches the node image patterns, * for any run of characters, dots literal', () => {
    const node = ['dutil.local/*:dev', 'dutil.local/*:test']
    expect(imagePresent('dutil.local/dutil-runner-split-pdf:dev', node)).toBe(true)
    expect(imagePresent('dutil.local/dutil-gateway:test', node)).toBe(true)
    expect(imagePresent('dutil.local/dutil-runner-split-pdf:absent', node)).toBe(false)
    expect(imagePresent('dutilxlocal/dutil-gateway:dev', node)).toBe(false)
    expect(imagePresent('anything/at:all', ['*'])).toBe(true)
  })
})
