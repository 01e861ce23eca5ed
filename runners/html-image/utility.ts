import Type from 'typebox'
import type { InputProblem, UtilityDefinition } from '../../contract/utility.js'
import { checkPage, htmlPdf, PAGE_LOADING, PAGE_SOURCE } from '../html-pdf/utility.js'

/** The picture's largest side, in device pixels (what Chromium captures in one piece). */
export const MAX_IMAGE_SIDE_PX = 16_384
/** The picture's largest area, in device pixels (32 Mpx: e.g. 1,920 × 16,384). */
export const MAX_IMAGE_PIXELS = 32 * 1024 * 1024
/** The viewport when none is given: Puppeteer's and Gotenberg's. */
export const DEFAULT_VIEWPORT = { width: 800, height: 600 } as const

const Px = (description: string, max: number, min = 1) => Type.Integer({ minimum: min, maximum: max, description })

export const ImageOptionsSchema = Type.Object(
  {
    format: Type.Optional(
      Type.Union([Type.Literal('png'), Type.Literal('jpeg'), Type.Literal('webp')], {
        description: "The picture's format (default png).",
      }),
    ),
    quality: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 100, description: 'jpeg and webp: the quality, 0 to 100 (default 80).' }),
    ),
    width: Type.Optional(Px('The viewport width in CSS pixels, 16 to 3,840 (default 800).', 3840, 16)),
    height: Type.Optional(Px('The viewport height in CSS pixels, 16 to 16,384 (default 600).', 16_384, 16)),
    deviceScaleFactor: Type.Optional(
      Type.Number({
        minimum: 0.25,
        maximum: 4,
        description:
          'Device pixels per CSS pixel, 0.25 to 4 (default 1; 2 for a sharp picture on high-density screens).',
      }),
    ),
    fullPage: Type.Optional(
      Type.Boolean({ description: 'The whole page as tall and wide as its content, not just the viewport.' }),
    ),
    clip: Type.Optional(
      Type.Object(
        {
          x: Px('From the left of the page, in CSS pixels.', 100_000, 0),
          y: Px('From the top of the page, in CSS pixels.', 100_000, 0),
          width: Px('In CSS pixels.', MAX_IMAGE_SIDE_PX),
          height: Px('In CSS pixels.', MAX_IMAGE_SIDE_PX),
        },
        { additionalProperties: false, description: 'A rectangle of the page to picture, in page coordinates.' },
      ),
    ),
    selector: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'A CSS selector: the picture of the first element it matches (the job fails if none does).',
      }),
    ),
    omitBackground: Type.Optional(
      Type.Boolean({
        description: "png and webp: no white background, where the page has none the picture's is transparent.",
      }),
    ),
    optimizeForSpeed: Type.Optional(Type.Boolean({ description: 'Encode faster, for a larger file (png and webp).' })),
  },
  { additionalProperties: false, description: 'The picture: its format, the viewport, and what part of the page.' },
)

export interface ImageOptionsInput {
  format?: 'png' | 'jpeg' | 'webp'
  quality?: number
  width?: number
  height?: number
  deviceScaleFactor?: number
  fullPage?: boolean
  clip?: { x: number; y: number; width: number; height: number }
  selector?: string
  omitBackground?: boolean
  optimizeForSpeed?: boolean
}

/**
 * A picture's size check (pure): `width` × `height` CSS pixels at `scale` give at most
 * MAX_IMAGE_SIDE_PX a side and MAX_IMAGE_PIXELS in all; the message says what was asked.
 */
export function pictureTooLarge(width: number, height: number, scale: number): string | undefined {
  const w = Math.ceil(width * scale)
  const h = Math.ceil(height * scale)
  if (w <= MAX_IMAGE_SIDE_PX && h <= MAX_IMAGE_SIDE_PX && w * h <= MAX_IMAGE_PIXELS) return undefined
  return `the picture would be ${w} × ${h} pixels; at most ${MAX_IMAGE_SIDE_PX.toLocaleString('en-US')} a side and ${MAX_IMAGE_PIXELS / 1024 / 1024} Mpx in all`
}

/** Rules between imageOptions keys that JSON Schema cannot say plainly. */
export function checkImageOptions(input: unknown): InputProblem[] {
  const o = (input as { imageOptions?: ImageOptionsInput }).imageOptions
  if (!o) return []
  const problems: InputProblem[] = []
  const format = o.format ?? 'png'
  if (o.quality !== undefined && format === 'png')
    problems.push({ path: 'imageOptions.quality', message: 'is taken for jpeg and webp, not png' })
  if (o.omitBackground && format === 'jpeg')
    problems.push({ path: 'imageOptions.omitBackground', message: 'jpeg has no transparency: use png or webp' })
  const regions = (['fullPage', 'clip', 'selector'] as const).filter((k) => o[k] !== undefined && o[k] !== false)
  if (regions.length > 1)
    problems.push({ path: `imageOptions.${regions[1]}`, message: `is not taken with ${regions[0]}: give one of them` })
  const scale = o.deviceScaleFactor ?? 1
  const viewport = pictureTooLarge(o.width ?? DEFAULT_VIEWPORT.width, o.height ?? DEFAULT_VIEWPORT.height, scale)
  if (viewport) problems.push({ path: 'imageOptions', message: `the viewport is too large: ${viewport}` })
  const clip = o.clip && pictureTooLarge(o.clip.width, o.clip.height, scale)
  if (clip) problems.push({ path: 'imageOptions.clip', message: `is too large: ${clip}` })
  return problems
}

/**
 * html-image: a picture of a page (png, jpeg or webp), loaded as html-pdf loads it. It runs in
 * html-pdf's runner image (Chromium and its fonts), with a program of its own.
 */
export const htmlImage: UtilityDefinition = {
  slug: 'html-image',
  name: 'HTML to image',
  description:
    'Takes a picture of an HTML page (a public URL, an upload, or the page itself with its images, styles and fonts): png, jpeg or webp, the viewport, the full page, a rectangle or one element.',
  category: 'image',
  icon: 'screenshot_monitor',
  target: 'image',
  maxDurationSeconds: 300,
  inputSchema: Type.Object(
    {
      ...PAGE_SOURCE,
      imageOptions: Type.Optional(ImageOptionsSchema),
      ...PAGE_LOADING,
      media: Type.Optional(
        Type.Union([Type.Literal('screen'), Type.Literal('print')], {
          description: 'The CSS media type the page is laid out for (default screen).',
        }),
      ),
    },
    { additionalProperties: false, description: 'The page as url, html or markdown (one of them).' },
  ),
  exampleInput: {
    url: 'https://example.com/',
    imageOptions: { format: 'png', width: 1280, height: 800, fullPage: true },
  },
  enabled: true,
  checkInput: (input) => [...checkPage(input), ...checkImageOptions(input)],
  runner: {
    ...htmlPdf.runner,
    entry: 'dist/runners/html-image/bundle/main.js',
    // The picture is encoded by Chromium and handed over whole (base64 over its pipe): up to
    // 32 Mpx, room for it twice beside the page's own bytes.
    maxHeapMb: 768,
  },
}
