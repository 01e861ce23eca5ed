import { RunnerError, rejected } from '../common/runner-error.js'
import { runBoundedChild } from '../common/bounded-child.js'
import { pdfaPart, type PdfaLevel } from '../common/xmp.js'

export const GHOSTSCRIPT = process.env.DUTIL_GS_PATH || '/usr/bin/gs'

/** Debian's copy of Ghostscript's sRGB profile: the output intent of every PDF/A document made. */
export const SRGB_PROFILE = process.env.DUTIL_GS_SRGB_PROFILE || '/usr/share/color/icc/ghostscript/srgb.icc'

/** Ghostscript's environment: nothing of the runner's. */
const GS_ENV = ['LANG', 'LC_ALL', 'TZ'] as const

/** What a rewrite by Ghostscript is asked for: the edits only it makes. */
export interface RewriteOptions {
  pdfa?: PdfaLevel
  /** JPEG quality of the pictures, 1–100. */
  imageQuality?: number
  /** Colour and grey pictures scaled down to at most this many dots per inch. */
  maxImageResolution?: number
}

/** Whether an edit needs Ghostscript's rewrite of the document. */
export function rewrites(o: RewriteOptions): boolean {
  return o.pdfa !== undefined || o.imageQuality !== undefined || o.maxImageResolution !== undefined
}

/**
 * The PostScript Ghostscript reads before a PDF/A document: the sRGB output intent the standard
 * asks of a document whose colours are device RGB (Ghostscript converts every colour to it).
 * Ghostscript's own example file also sets the title ("Title"): this one sets nothing else.
 */
export function pdfaDefinition(profile: string = SRGB_PROFILE): string {
  const path = profile.replace(/[\\()]/g, (c) => `\\${c}`)
  return [
    '%!',
    `[/_objdef {icc_PDFA} /type /stream /OBJ pdfmark`,
    `[{icc_PDFA} << /N 3 >> /PUT pdfmark`,
    `[{icc_PDFA} (${path}) (r) file /PUT pdfmark`,
    `[/_objdef {OutputIntent_PDFA} /type /dict /OBJ pdfmark`,
    `[{OutputIntent_PDFA} << /Type /OutputIntent /S /GTS_PDFA1 /DestOutputProfile {icc_PDFA} /OutputConditionIdentifier (sRGB) /Info (sRGB IEC61966-2.1) >> /PUT pdfmark`,
    `[{Catalog} << /OutputIntents [ {OutputIntent_PDFA} ] >> /PUT pdfmark`,
    '',
  ].join('\n')
}

/**
 * Ghostscript's arguments for a rewrite (pure). Pictures keep what they are unless an option
 * asks: JPEG pictures pass through untouched and the others are compressed losslessly (never
 * turned into JPEG behind the caller's back); `imageQuality` re-encodes colour and grey pictures
 * as JPEG of that quality; `maxImageResolution` scales colour and grey pictures above it down
 * (bicubic; 1-bit pictures, scans of text, keep theirs). `pdfa` makes the document of that
 * level: colours converted to sRGB, fonts embedded, what the standard forbids (JavaScript,
 * actions) left out rather than the document refused; under PDF/A-1, which has no transparency, a
 * page that uses it is drawn as a picture.
 */
export function ghostscriptArgs(
  o: RewriteOptions,
  files: { input: string; output: string; pdfaDefinition?: string },
  profile: string = SRGB_PROFILE,
): string[] {
  const args = ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-dNOPROMPT', '-sDEVICE=pdfwrite']
  if (o.imageQuality !== undefined)
    args.push(
      '-dPassThroughJPEGImages=false',
      '-dAutoFilterColorImages=false',
      '-dAutoFilterGrayImages=false',
      '-dColorImageFilter=/DCTEncode',
      '-dGrayImageFilter=/DCTEncode',
      `-dJPEGQ=${o.imageQuality}`,
    )
  else
    args.push(
      '-dAutoFilterColorImages=false',
      '-dAutoFilterGrayImages=false',
      '-dColorImageFilter=/FlateEncode',
      '-dGrayImageFilter=/FlateEncode',
    )
  if (o.maxImageResolution !== undefined)
    for (const kind of ['Color', 'Gray'])
      args.push(
        `-dDownsample${kind}Images=true`,
        `-d${kind}ImageDownsampleType=/Bicubic`,
        `-d${kind}ImageResolution=${o.maxImageResolution}`,
        `-d${kind}ImageDownsampleThreshold=1.0`,
      )
  else args.push('-dDownsampleColorImages=false', '-dDownsampleGrayImages=false')
  args.push('-dDownsampleMonoImages=false')
  if (o.pdfa !== undefined) {
    if (!files.pdfaDefinition) throw new Error('a PDF/A rewrite needs its definition file')
    args.push(
      `-dPDFA=${pdfaPart(o.pdfa)}`,
      // What the standard forbids is left out, never the whole claim dropped.
      '-dPDFACompatibilityPolicy=1',
      '-sColorConversionStrategy=RGB',
      `--permit-file-read=${profile}`,
    )
  }
  args.push(`-sOutputFile=${files.output}`)
  if (o.pdfa !== undefined) args.push(files.pdfaDefinition!)
  args.push(files.input)
  return args
}

/** Ghostscript's reason for a failure: its error lines, without the job's file names. */
export function ghostscriptReason(output: string): string {
  const line =
    output
      .split('\n')
      .map((l) => l.replace(/^\s*\*+\s*/, '').trim())
      .find((l) => /error/i.test(l)) ?? 'no reason given'
  return line.replace(/\S*\/(stage-\d+|input|rewritten)\.pdf/g, 'the PDF').slice(0, 200)
}

/**
 * Runs one Ghostscript rewrite in the job's scratch space, within a time limit. A document it
 * cannot rewrite is the input's fault (upstream_rejected, with its reason); killed, upstream_error.
 */
export async function runGhostscript(args: string[], o: { cwd: string; timeoutMs: number }): Promise<void> {
  const run = await runBoundedChild(GHOSTSCRIPT, args, { ...o, env: GS_ENV, maxOutputBytes: 1024 * 1024 })
  if (run.timedOut)
    throw rejected(`Ghostscript did not finish rewriting the PDF within ${Math.round(o.timeoutMs / 1000)} s.`)
  if (run.code === 0) return
  if (run.code !== null && !run.overflow)
    throw rejected(
      `Ghostscript could not rewrite the PDF (${ghostscriptReason(run.stdout.toString('utf8') + '\n' + run.stderr)}).`,
    )
  throw new RunnerError(
    'upstream_error',
    `Ghostscript stopped while rewriting the PDF (${run.signal ?? 'its output past its bound'}).`,
  )
}
