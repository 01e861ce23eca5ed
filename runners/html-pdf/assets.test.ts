import { describe, expect, it } from 'vitest'
import { assetContentType, assetNameOf, assetPathOf, readsAsUtf8 } from './assets.js'

describe('page assets', () => {
  it('are called by their name, else by their file name', () => {
    const url = 's3://dutil/uploads/2026-11-28/file_01JCZ8Y3E7XK2M9QW4T6R5S000/my%20logo.png'
    expect(assetNameOf({ url })).toBe('my logo.png')
    expect(assetNameOf({ url, name: 'img/logo.png' })).toBe('img/logo.png')
  })

  it("are found by the request's decoded path, without its query", () => {
    expect(assetPathOf('https://input.dutil.invalid/img/my%20logo.png?v=2#x')).toBe('img/my logo.png')
    expect(assetPathOf('https://input.dutil.invalid/')).toBeNull()
    expect(assetPathOf('https://input.dutil.invalid/%E0%A4%A')).toBeNull()
  })

  it('are served with the type their extension names (a stylesheet must be text/css to apply)', () => {
    expect(assetContentType('css/site.CSS')).toBe('text/css')
    expect(assetContentType('fonts/a.woff2')).toBe('font/woff2')
    expect(assetContentType('README')).toBe('application/octet-stream')
  })
})

describe('readsAsUtf8', () => {
  it('sends an undeclared UTF-8 document as UTF-8, and leaves a declared or other one to the browser', () => {
    expect(readsAsUtf8(Buffer.from('<title>Zürich</title><p>ok</p>'))).toBe(true)
    expect(readsAsUtf8(Buffer.from('<p>plain ASCII</p>'))).toBe(true)
    expect(readsAsUtf8(Buffer.from('<title>Z\xfcrich</title>', 'latin1'))).toBe(false)
    expect(readsAsUtf8(Buffer.from('<meta charset="iso-8859-1"><title>Zürich</title>'))).toBe(false)
    expect(readsAsUtf8(Buffer.from('\ufeff<title>Zürich</title>'))).toBe(false)
  })
})
