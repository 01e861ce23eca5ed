import type { CDPSession } from 'puppeteer-core'
import { describe, expect, it } from 'vitest'
import { viewportPicture } from './frames.js'

/** A DevTools session whose frames carry the given pictures in turn (undefined: a frame without one). */
function framesCarrying(pictures: (string | undefined)[]) {
  const sent: unknown[] = []
  const session = {
    send: (method: string, params: unknown) => {
      sent.push({ method, params })
      const data = pictures.shift()
      return Promise.resolve({ hasDamage: data !== undefined, ...(data ? { screenshotData: data } : {}) })
    },
  } as unknown as CDPSession
  return { session, sent }
}

describe('viewportPicture', () => {
  it('takes the picture of the first frame that carries one, asking for it with the options given', async () => {
    const { session, sent } = framesCarrying([undefined, Buffer.from('picture').toString('base64')])
    const picture = await viewportPicture(session, { format: 'webp', quality: 70, optimizeForSpeed: true })
    expect(picture.toString()).toBe('picture')
    expect(sent).toEqual([
      {
        method: 'HeadlessExperimental.beginFrame',
        params: { screenshot: { format: 'webp', quality: 70, optimizeForSpeed: true } },
      },
      {
        method: 'HeadlessExperimental.beginFrame',
        params: { screenshot: { format: 'webp', quality: 70, optimizeForSpeed: true } },
      },
    ])
  })

  it('gives up after five frames without a picture, saying so', async () => {
    const { session, sent } = framesCarrying([])
    await expect(viewportPicture(session, { format: 'png' })).rejects.toThrow('the browser drew no picture in 5 frames')
    expect(sent).toHaveLength(5)
  })
})
