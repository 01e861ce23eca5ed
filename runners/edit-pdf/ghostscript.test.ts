import { describe, expect, it } from 'vitest'
import { ghostscriptArgs, ghostscriptReason, pdfaDefinition, rewrites } from './ghostscript.js'
import { xmpDate } from '../common/xmp.js'

const files = { input: '/s/stage-1.pdf', output: '/s/rewritten.pdf', pdfaDefinition: '/s/pdfa.ps' }

describe('ghostscriptArgs', () => {
  it('keeps pictures as they are unless asked: JPEG passed through, the rest lossless', () => {
    const args = ghostscriptArgs({ pdfa: 'PDF/A-2b' }, files, '/icc/srgb.icc')
    expect(args).toContain('-dSAFER')
    expect(args).toContain('-dColorImageFilter=/FlateEncode')
    expect(args).not.toContain('-dPassThroughJPEGImages=false')
    expect(args).toContain('-dDownsampleColorImages=false')
    expect(args).toEqual(
      expect.arrayContaining([
        '-dPDFA=2',
        '-dPDFACompatibilityPolicy=1',
        '-sColorConversionStrategy=RGB',
        '--permit-file-read=/icc/srgb.icc',
      ]),
    )
    // The definition file before the document, the document last.
    expect(args.slice(-3)).toEqual(['-sOutputFile=/s/rewritten.pdf', '/s/pdfa.ps', '/s/stage-1.pdf'])
  })
  it('re-encodes and scales down colour and grey pictures, never 1-bit ones', () => {
    const args = ghostscriptArgs({ imageQuality: 40, maxImageResolution: 150 }, { input: 'in', output: 'out' })
    expect(args).toEqual(
      expect.arrayContaining([
        '-dPassThroughJPEGImages=false',
        '-dColorImageFilter=/DCTEncode',
        '-dGrayImageFilter=/DCTEncode',
        '-dJPEGQ=40',
        '-dDownsampleColorImages=true',
        '-dColorImageResolution=150',
        '-dGrayImageResolution=150',
        '-dDownsampleMonoImages=false',
      ]),
    )
    expect(args.some((a) => a.startsWith('-dPDFA'))).toBe(false)
    expect(args.at(-1)).toBe('in')
    expect(() => ghostscriptArgs({ pdfa: 'PDF/A-1b' }, { input: 'in', output: 'out' })).toThrow(/definition/)
  })
  it('rewrites only for the options that need it', () => {
    expect(rewrites({})).toBe(false)
    expect(rewrites({ maxImageResolution: 300 })).toBe(true)
  })
})

describe('pdfaDefinition', () => {
  it("names the sRGB profile as the output intent, escaped as a PostScript string, and sets no title (Ghostscript's example does)", () => {
    const ps = pdfaDefinition('/usr/share/icc (x)/srgb.icc')
    expect(ps).toContain('(/usr/share/icc \\(x\\)/srgb.icc) (r) file')
    expect(ps).toContain('/S /GTS_PDFA1')
    expect(ps).not.toContain('DOCINFO')
  })
})

describe('ghostscriptReason', () => {
  it('gives its error line without the scratch file names', () => {
    expect(ghostscriptReason('   **** Error: /tmp/x/stage-1.pdf: cannot find page tree\nother')).toBe(
      'Error: the PDF: cannot find page tree',
    )
    expect(ghostscriptReason('')).toBe('no reason given')
  })
})

describe('xmpDate', () => {
  it('reads PDF dates, with and without a zone, and refuses what is none', () => {
    expect(xmpDate('D:20261130')).toBe('2026-11-30T00:00:00Z')
    expect(xmpDate("D:20261130101500-05'30'")).toBe('2026-11-30T10:15:00-05:30')
    expect(xmpDate('yesterday')).toBeUndefined()
  })
})
