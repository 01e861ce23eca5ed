import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { api, download } from './helpers/api.js'
import { createKey } from './helpers/keys.js'
import { jobOutputs } from './helpers/storage.js'
import { FileServer } from '../support/file-server.js'
import { hostile } from '../support/fixtures.js'
import { decodePng, pictureSize } from '../support/pictures.js'

let files: FileServer
let key: string
beforeAll(async () => {
  files = await new FileServer().start()
  key = (await createKey()).key
  files.add('style.css', Buffer.from('body { margin: 0; background: rgb(238, 238, 255) }'), 'text/css')
})
afterAll(() => files.stop())

const page = (body: string) =>
  Buffer.from(
    `<!doctype html><html><head><title>Chart</title><link rel="stylesheet" href="/files/style.css"></head><body>${body}</body></html>`,
  )
const picture = (input: unknown) => api('POST', '/v1/utilities/html-image', { key, body: { input } })

/** The one picture a job made, its size checked against what the job says. */
async function pictureOf(job: {
  result: { files: Array<{ url: string; size: number }>; width: number; height: number }
}) {
  const [file] = job.result.files
  const { bytes } = await download(file.url)
  expect(bytes.length).toBe(file.size)
  const size = pictureSize(bytes)
  expect({ width: size.width, height: size.height }).toEqual({ width: job.result.width, height: job.result.height })
  return { bytes, ...size }
}

const RED = [255, 0, 0, 255]
const PAGE_BLUE = [238, 238, 255, 255]

describe('html-image through the whole platform', () => {
  it('given a page with a stylesheet, a sync run answers a PNG of the viewport asked for, named after the page', async () => {
    const url = files.add('chart.html', page('<div style="width:40px;height:30px;background:red"></div>'), 'text/html')
    const res = await picture({ url, imageOptions: { width: 320, height: 200 } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ utility: 'html-image', status: 'succeeded', error: null })
    expect(res.body.result).toMatchObject({ width: 320, height: 200 })
    expect(res.body.result.files[0]).toMatchObject({ name: 'chart.png', contentType: 'image/png' })
    const png = decodePng((await pictureOf(res.body)).bytes)
    expect(png.rgba(10, 10)).toEqual(RED) // the red box at the top left
    expect(png.rgba(200, 100)).toEqual(PAGE_BLUE) // the stylesheet's background
  })

  it('pictures the full page as tall as its content, at twice the pixels; one element by selector; a rectangle as jpeg and webp', async () => {
    const tall = page(
      '<div style="height:1500px;width:10px"></div><div id="box" style="margin-left:50px;width:120px;height:80px;background:red"></div>',
    )
    const url = files.add('tall.html', tall, 'text/html')
    const full = await picture({ url, imageOptions: { width: 300, height: 200, fullPage: true, deviceScaleFactor: 2 } })
    expect(full.status, JSON.stringify(full.body)).toBe(200)
    expect(full.body.result).toMatchObject({ width: 600, height: 3160 })
    const fullPng = decodePng((await pictureOf(full.body)).bytes)
    expect(fullPng.rgba(100 * 2, 1550 * 2)).toEqual(RED) // the box, below the first screen
    expect(fullPng.rgba(10, 10)).toEqual(PAGE_BLUE)

    const box = await picture({ url, imageOptions: { width: 300, height: 200, selector: '#box' } })
    expect(box.status, JSON.stringify(box.body)).toBe(200)
    expect(box.body.result).toMatchObject({ width: 120, height: 80 })
    const boxPng = decodePng((await pictureOf(box.body)).bytes)
    for (const [x, y] of [
      [0, 0],
      [119, 79],
      [60, 40],
    ])
      expect(boxPng.rgba(x, y)).toEqual(RED)

    const jpeg = await picture({
      url,
      imageOptions: { format: 'jpeg', quality: 50, clip: { x: 0, y: 1400, width: 200, height: 150 } },
    })
    expect(jpeg.status, JSON.stringify(jpeg.body)).toBe(200)
    expect(jpeg.body.result.files[0]).toMatchObject({ name: 'tall.jpg', contentType: 'image/jpeg' })
    expect(await pictureOf(jpeg.body)).toMatchObject({ format: 'jpeg', width: 200, height: 150 })
    const webp = await picture({ url, imageOptions: { format: 'webp', width: 256, height: 128 } })
    expect(webp.status, JSON.stringify(webp.body)).toBe(200)
    expect(webp.body.result.files[0]).toMatchObject({ name: 'tall.webp', contentType: 'image/webp' })
    expect(await pictureOf(webp.body)).toMatchObject({ format: 'webp', width: 256, height: 128 })
  })

  it('leaves a page without a background transparent when asked, and lays the page out for print when asked', async () => {
    const html =
      '<!doctype html><html><head><style>@media print { #screen { display: none } }</style></head>' +
      '<body style="margin:0"><div id="screen" style="width:50px;height:50px;background:red"></div></body></html>'
    const clear = await picture({ html, imageOptions: { width: 100, height: 100, omitBackground: true } })
    expect(clear.status, JSON.stringify(clear.body)).toBe(200)
    expect(clear.body.result.files[0].name).toBe('document.png')
    const png = decodePng((await pictureOf(clear.body)).bytes)
    expect(png.rgba(10, 10)).toEqual(RED)
    expect(png.rgba(80, 80)[3]).toBe(0)
    const print = await picture({ html, media: 'print', imageOptions: { width: 100, height: 100 } })
    expect(decodePng((await pictureOf(print.body)).bytes).rgba(10, 10)).toEqual([255, 255, 255, 255])
  })

  it('draws a page while it waits: an animation the page runs frame by frame is pictured where the wait ends; a frame callback of a page without a wait is in its picture', async () => {
    // 40 animation frames (two thirds of a second at 60 Hz) widen a red bar, then mark the page done.
    const html =
      '<!doctype html><body style="margin:0"><div id="bar" style="height:20px;width:0;background:red"></div><script>' +
      "let n = 0; const bar = document.getElementById('bar');" +
      "function step() { n++; bar.style.width = n * 5 + 'px'; if (n < 40) requestAnimationFrame(step); else document.body.dataset.done = 'yes' }" +
      'requestAnimationFrame(step)</script></body>'
    const waited = await picture({
      html,
      wait: { selector: 'body[data-done]' },
      imageOptions: { width: 300, height: 50 },
    })
    expect(waited.status, JSON.stringify(waited.body)).toBe(200)
    const png = decodePng((await pictureOf(waited.body)).bytes)
    expect(png.rgba(195, 10)).toEqual(RED) // the bar's 40th step: 200 px wide
    expect(png.rgba(205, 10)).toEqual([255, 255, 255, 255])

    const once = await picture({
      html: '<body style="margin:0"><script>requestAnimationFrame(() => { document.body.style.background = "red" })</script></body>',
      imageOptions: { width: 50, height: 50 },
    })
    expect(once.status, JSON.stringify(once.body)).toBe(200)
    expect(decodePng((await pictureOf(once.body)).bytes).rgba(25, 25)).toEqual(RED)
  })

  it('refuses options that do not go together, and a picture too large, before any job; a page or element too large or missing fails naming it', async () => {
    const refused = await picture({
      html: '<p>x</p>',
      imageOptions: { quality: 50, fullPage: true, selector: 'p', width: 3840, height: 16_384, deviceScaleFactor: 4 },
    })
    expect(refused.status).toBe(400)
    expect(refused.body.error.details).toEqual([
      { path: 'input.imageOptions.quality', message: 'is taken for jpeg and webp, not png' },
      { path: 'input.imageOptions.selector', message: 'is not taken with fullPage: give one of them' },
      {
        path: 'input.imageOptions',
        message: expect.stringContaining('the viewport is too large: the picture would be 15360 × 65536 pixels'),
      },
    ])
    const jpegClear = await picture({ html: '<p>x</p>', imageOptions: { format: 'jpeg', omitBackground: true } })
    expect(jpegClear.status).toBe(400)
    expect(jpegClear.body.error.details[0].path).toBe('input.imageOptions.omitBackground')
    expect((await picture({ html: '<p>x</p>', imageOptions: { width: 5000 } })).status).toBe(400)

    const tooTall = await picture({ html: '<div style="height:20000px"></div>', imageOptions: { fullPage: true } })
    expect(tooTall.status).toBe(422)
    expect(tooTall.body.error).toMatchObject({ code: 'upstream_rejected' })
    expect(tooTall.body.error.message).toMatch(/too large to picture: the picture would be 800 × 20\d\d\d pixels/)
    expect(await jobOutputs(tooTall.body)).toEqual([])
    const missing = await picture({ html: '<p>x</p>', imageOptions: { selector: '#chart' } })
    expect(missing.body).toMatchObject({ status: 'failed', error: { code: 'upstream_rejected' } })
    expect(missing.body.error.message).toBe('No element of the page matches the selector "#chart".')
    const invalid = await picture({ html: '<p>x</p>', imageOptions: { selector: 'p[' } })
    expect(invalid.body.error.message).toMatch(/^The selector "p\[" is not valid/)
  })

  it('given HTML that loads file:///etc/passwd, the run fails as upstream_rejected and no picture is stored', async () => {
    const url = files.add('file-url.html', hostile('file-url.html'), 'text/html')
    const res = await picture({ url })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ status: 'failed', result: null, error: { code: 'upstream_rejected' } })
    expect(res.body.error.message).toMatch(/file:\/\/\/etc\/(passwd|shadow|hostname)/)
    expect(await jobOutputs(res.body)).toEqual([])
  })

  it('takes the page and its picture in one multipart call and answers the PNG itself', async () => {
    const PIXEL = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgaGAAAAEEAIFw9selAAAAAElFTkSuQmCC', // one green pixel
      'base64',
    )
    const body = new FormData()
    body.append(
      'file',
      new Blob([
        '<!doctype html><body style="margin:0"><img src="dot.png" style="width:64px;height:64px;image-rendering:pixelated"></body>',
      ]),
      'card.html',
    )
    body.append('assets', new Blob([PIXEL]), 'dot.png')
    body.append('input', JSON.stringify({ imageOptions: { width: 64, height: 64 } }))
    const res = await fetch(`${inject('gatewayUrl')}/v1/utilities/html-image`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, Accept: 'image/png' },
      body,
    })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('content-disposition')).toContain('filename="card.png"')
    const png = decodePng(Buffer.from(await res.arrayBuffer()))
    expect({ width: png.width, height: png.height }).toEqual({ width: 64, height: 64 })
    expect(png.rgba(32, 32)).toEqual(
      decodePng(PIXEL)
        .rgba(0, 0)
        .map((v, i) => (i === 3 ? 255 : v)),
    )
  })
})
