import { rm } from 'node:fs/promises'
import type { Browser, BrowserContext, HTTPRequest, Page, PDFOptions, Target } from 'puppeteer-core'
import puppeteer, { TimeoutError } from 'puppeteer-core'
import { parseS3Url } from '../../contract/storage-keys.js'
import { checkOutboundUrl, describeUrl, outboundRequest } from '../common/outbound-fetch.js'
import { downloadInput } from '../common/read-input.js'
import { rejected, RunnerError, UrlRefusedError } from '../common/runner-error.js'
import { type RunContext, runUtility, type UtilityOutcome } from '../common/run-utility.js'
import { CHROMIUM_SANDBOX, type StartedChromium } from './chromium.js'
import { MAX_WAIT_MS, pdfFileName, type PdfOptionsInput, printOptions, singlePageLayout } from './print-options.js'
import { forwardHeaders, localResourceFromConsole, responseHeaders, routeRequest } from './request-policy.js'
import { assetContentType, assetNameOf, assetPathOf, isMarkdownName, readsAsUtf8 } from './assets.js'
import { renderMarkdown } from './markdown-in-worker.js'
import { MAX_ARCHIVAL_BYTES } from '../common/pdf-identification-limits.js'

/** A page to load, as html-pdf and html-image take it. */
export interface PageInput {
  /** The page's address; or `html`, the page itself (utility.ts checks one of them is given). */
  url?: string
  html?: string
  /** Or the page as Markdown, rendered with the default stylesheet or `stylesheet`. */
  markdown?: string
  stylesheet?: string
  /** Files a page of dutil's own (html or s3://) refers to by relative path. */
  assets?: Array<{ url: string; name?: string }>
  /** The CSS media type the page is laid out for. */
  media?: 'print' | 'screen'
  /** Waits after the load, before printing or the picture (utility.ts PageWait). */
  wait?: { selector?: string; expression?: string; delayMs?: number }
}

export interface HtmlPdfInput extends PageInput {
  pdfOptions?: PdfOptionsInput
}

/** A job's page once loaded and waited on (loadPage), ready to print or to picture. */
export interface LoadedPage {
  /** The page's file name, for the output's ("invoice.html"). */
  inputName: string
  /** Throws the refusal of a request the page made (a refused address, too many bytes), if any. */
  checkRefused(): void
  /** For the log line: ms to load, then since, and what the page fetched. */
  stats(): { loadMs: number; renderMs: number; requests: number; bytes: number }
}

/** What a job does with its page in a running browser (html-pdf prints it, html-image pictures it). */
export type PageJob<I extends PageInput> = (
  page: Page,
  ctx: RunContext<I>,
  startup: () => StartupFields,
) => Promise<UtilityOutcome>

/** Budgets inside the 900 s limit, and size caps (docs/api.md, Utilities). */
export const HTML_PDF_LIMITS = {
  launchMs: 30_000,
  navigationMs: 120_000,
  renderMs: 300_000,
  /** An s3:// document. */
  maxDocumentBytes: 20 * 1024 ** 2,
  /** An s3:// document named .md or .markdown (rendered in a worker within MARKDOWN_LIMITS). */
  maxMarkdownBytes: 4 * 1024 ** 2,
  maxResourceBytes: 50 * 1024 ** 2,
  maxTotalBytes: 200 * 1024 ** 2,
  maxRequests: 1000,
}

/**
 * Where a page of dutil's own (html, or an s3:// document) and its assets are served from inside
 * the browser; nothing else answers there.
 */
const STORAGE_ORIGIN = 'https://input.dutil.invalid'
/** What a page given as html is called (its PDF: document.pdf). */
const INLINE_PAGE_NAME = 'document.html'

/** What the log line of a rendered page adds about the browser's start (job mode). */
export type StartupFields = Record<string, number>

/**
 * One job in a page of a running browser: load the page (loadPage), print it, stream the PDF to
 * storage. Job mode gives it the browser's first page; pool mode a page of a fresh context.
 */
export const renderInPage: PageJob<HtmlPdfInput> = async (page, ctx, startup) => {
  const { input, store, storeStream, log } = ctx
  const loaded = await loadPage(page, ctx)
  // Chromium states its own locale as the language of a page that declares none: an accessible
  // PDF states the page's own.
  if (input.pdfOptions?.pdfua && !String(await page.evaluate('document.documentElement.lang.trim()')))
    throw rejected(`${PAGE_REFUSALS.field}: ${PAGE_REFUSALS.language}`)
  // Chromium hands the finished PDF over in chunks (Page.printToPDF with ReturnAsStream), and
  // each chunk goes on to storage: a 200-page document is never held whole in this process.
  const print = input.pdfOptions?.singlePage
    ? await singlePageOptions(page, input.pdfOptions)
    : printOptions(input.pdfOptions)
  let pdf: ReadableStream<Uint8Array>
  try {
    pdf = await page.createPDFStream({ ...print, timeout: HTML_PDF_LIMITS.renderMs })
  } catch (err) {
    if (err instanceof TimeoutError)
      throw rejected(`Rendering the PDF took longer than ${HTML_PDF_LIMITS.renderMs / 1000} s.`)
    // Chromium's words for page ranges that leave nothing to print.
    if (/page range/i.test((err as Error).message))
      throw rejected(`The pages asked for (${input.pdfOptions?.pageRanges}) are past the end of the document.`)
    throw err
  }
  loaded.checkRefused()
  log.info({ ...startup(), ...loaded.stats() }, 'page rendered')
  const name = pdfFileName(loaded.inputName)
  const { pdfa, pdfua } = input.pdfOptions ?? {}
  if (pdfa || pdfua) {
    // Made archival or accessible whole, in memory (pdf-lib: loaded only by a job that asks).
    const whole = await collectBounded(pdf, MAX_ARCHIVAL_BYTES)
    const { archivalPdf } = await import('../common/pdf-identification.js')
    const made = await archivalPdf(whole, { pdfa, pdfua, refusal: PAGE_REFUSALS })
    const file = await store(name, Buffer.from(made), 'application/pdf')
    return { files: [file] }
  }
  const file = await storeStream(name, pdf, 'application/pdf')
  return { files: [file] }
}

/** What a page lacks for an accessible PDF, said as html-pdf's caller gives it. */
const PAGE_REFUSALS = {
  field: 'pdfOptions.pdfua',
  title: 'the page has no title (a <title> element), which an accessible PDF shows.',
  language: 'the page declares no language (<html lang="…">), which an accessible PDF states.',
  structure: 'Chromium wrote no structure for the page: it cannot be made accessible.',
}

/** A stream's bytes, whole, refused past `max` (the PDF of a page made archival or accessible). */
async function collectBounded(stream: AsyncIterable<Uint8Array>, max: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of stream) {
    total += chunk.length
    if (total > max)
      throw rejected(`The PDF passes ${max / 1024 ** 2} MB: dutil makes PDF/A and PDF/UA of smaller documents only.`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/**
 * Loads a job's page through the address guard (every request the page makes is intercepted and
 * fetched by this process, a page of dutil's own and its assets read from storage), in the media
 * type asked for, then waits for fonts and what input.wait names (through `waiting`, which may
 * do more meanwhile: html-image draws the page's frames).
 */
export async function loadPage(
  page: Page,
  { config, input, storage, log }: RunContext<PageInput>,
  waiting: (wait: () => Promise<void>) => Promise<void> = (wait) => wait(),
): Promise<LoadedPage> {
  const limits = HTML_PDF_LIMITS
  const s3 = input.url === undefined ? null : parseS3Url(input.url)
  let mainUrl = input.url ?? `${STORAGE_ORIGIN}/${INLINE_PAGE_NAME}`
  let storedDocument: Buffer | undefined
  if (input.html !== undefined) {
    storedDocument = Buffer.from(input.html, 'utf8')
  } else if (input.markdown !== undefined) {
    storedDocument = Buffer.from(await renderMarkdown(input.markdown, input.stylesheet), 'utf8')
  } else if (s3) {
    const name = s3.key.split('/').pop() || INLINE_PAGE_NAME
    storedDocument = await downloadInput(mainUrl, {
      storage,
      allowLoopback: false,
      maxBytes: isMarkdownName(name) ? limits.maxMarkdownBytes : limits.maxDocumentBytes,
      what: isMarkdownName(name) ? 'Markdown document' : 'HTML document',
    })
    // A document named *.md is Markdown: its page is rendered here, then loaded as any other.
    if (isMarkdownName(name))
      storedDocument = Buffer.from(await renderMarkdown(storedDocument.toString('utf8'), input.stylesheet))
    mainUrl = `${STORAGE_ORIGIN}/${encodeURIComponent(name)}`
  } else {
    await checkOutboundUrl(mainUrl, config.outbound)
  }
  // A page of dutil's own reaches its assets by relative path, each read from storage once.
  const assets = new Map((input.assets ?? []).map((a) => [assetNameOf(a), a.url]))
  const assetBodies = new Map<string, Promise<Buffer>>()
  const inputName = decodeURIComponent(new URL(mainUrl).pathname.split('/').pop() ?? '')

  let refused: { url: string; reason: string } | undefined
  const refusedFailure = (): RunnerError | null =>
    refused
      ? rejected(`The page tried to load ${describeUrl(refused.url)}, which is refused (${refused.reason}).`)
      : null
  const refuse = (url: string, reason: string) => {
    refused ??= { url, reason }
    log.warn({ url: describeUrl(url), reason }, 'refused a request of the page')
  }
  let requests = 0
  let totalBytes = 0
  // The page given in the request (JSON text) and Markdown's page are UTF-8; a stored document
  // is sent as it came, its own <meta charset> deciding, unless it declares none and reads as UTF-8.
  const documentType =
    storedDocument && (input.html !== undefined || input.markdown !== undefined || readsAsUtf8(storedDocument))
      ? 'text/html; charset=utf-8'
      : 'text/html'

  async function handle(req: HTTPRequest): Promise<void> {
    const url = req.url()
    const route = routeRequest(url)
    if (route === 'internal') return req.continue()
    if (route === 'refuse') {
      refuse(url, `the ${/^([a-z0-9+.-]+):/i.exec(url)?.[1] ?? 'unknown'}: scheme is not allowed`)
      return req.abort('accessdenied')
    }
    if (storedDocument && url === mainUrl) {
      return req.respond({ status: 200, contentType: documentType, body: storedDocument })
    }
    if (++requests > limits.maxRequests) {
      refuse(url, `the page makes more than ${limits.maxRequests} requests`)
      return req.abort('blockedbyclient')
    }
    if (url.startsWith(`${STORAGE_ORIGIN}/`)) {
      const name = assetPathOf(url)
      const assetUrl = name === null ? undefined : assets.get(name)
      if (name === null || assetUrl === undefined) return req.respond({ status: 404, body: '' })
      let body: Buffer
      try {
        let pending = assetBodies.get(name)
        if (!pending) {
          pending = downloadInput(assetUrl, {
            storage,
            allowLoopback: false,
            maxBytes: limits.maxResourceBytes,
            what: `asset ${name}`,
          })
          assetBodies.set(name, pending)
          totalBytes += (await pending).length
        }
        body = await pending
      } catch (err) {
        refuse(url, err instanceof RunnerError ? err.message : 'the asset could not be read')
        return req.abort('failed')
      }
      if (totalBytes > limits.maxTotalBytes) {
        refuse(url, `the page loads more than ${limits.maxTotalBytes / 1024 ** 2} MB`)
        return req.abort('blockedbyclient')
      }
      return req.respond({ status: 200, contentType: assetContentType(name), body })
    }
    if (req.method() !== 'GET' && req.method() !== 'HEAD') return req.abort('blockedbyclient')
    let res
    try {
      res = await outboundRequest(url, {
        ...config.outbound,
        headers: forwardHeaders(req.headers()),
        timeoutMs: 30_000,
      })
    } catch (err) {
      if (err instanceof UrlRefusedError) {
        refuse(url, err.message)
        return req.abort('accessdenied')
      }
      return req.abort('failed')
    }
    const chunks: Buffer[] = []
    let size = 0
    try {
      for await (const c of res.body) {
        size += (c as Buffer).length
        totalBytes += (c as Buffer).length
        if (size > limits.maxResourceBytes || totalBytes > limits.maxTotalBytes) {
          res.body.destroy()
          refuse(
            url,
            size > limits.maxResourceBytes
              ? `a resource is larger than ${limits.maxResourceBytes / 1024 ** 2} MB`
              : `the page loads more than ${limits.maxTotalBytes / 1024 ** 2} MB`,
          )
          return req.abort('blockedbyclient')
        }
        chunks.push(c as Buffer)
      }
    } catch {
      return req.abort('failed')
    }
    return req.respond({ status: res.status, headers: responseHeaders(res.headers), body: Buffer.concat(chunks) })
  }

  const tStart = Date.now()
  let tLoaded = 0
  await page.setRequestInterception(true)
  page.on('request', (req) => {
    handle(req).catch((err) => {
      log.warn({ err }, 'request handler failed')
      req.abort('failed').catch(() => {})
    })
  })
  page.on('console', (msg) => {
    const local = localResourceFromConsole(msg.text())
    if (local) refuse(local, 'local files are not allowed')
  })
  // Screen or print: the page's CSS for the medium asked for (a pool pod's page is its job's alone).
  await page.emulateMediaType(input.media)
  let response
  try {
    response = await page.goto(mainUrl, { waitUntil: 'load', timeout: limits.navigationMs })
  } catch (err) {
    if (refused)
      throw rejected(`The page could not be loaded: ${describeUrl(refused.url)} is refused (${refused.reason}).`)
    if (err instanceof TimeoutError)
      throw rejected(`The page did not finish loading within ${limits.navigationMs / 1000} s.`)
    throw rejected(`The page could not be loaded (${(err as Error).message.split('\n')[0].slice(0, 200)}).`)
  }
  tLoaded = Date.now()
  const status = response?.status() ?? 0
  if (status >= 400) throw rejected(`Loading the page failed: the server answered ${status}.`, status)
  await page.evaluate('document.fonts.ready.then(() => true)').catch(() => {})
  const { wait } = input
  if (wait) await waiting(() => waitInPage(page, wait))
  const checkRefused = () => {
    const failure = refusedFailure()
    if (failure) throw failure
  }
  checkRefused()
  return {
    inputName,
    checkRefused,
    stats: () => ({ loadMs: tLoaded - tStart, renderMs: Date.now() - tLoaded, requests, bytes: totalBytes }),
  }
}

/**
 * singlePage: the page laid out at the printable width of its paper, measured, and printed on
 * one page of that height (singlePageLayout refuses one too tall).
 */
async function singlePageOptions(page: Page, o: PdfOptionsInput): Promise<PDFOptions> {
  const layout = singlePageLayout(o)
  await page.setViewport({ width: layout.layoutWidthPx, height: 600 })
  const contentPx = Number(await page.evaluate('Math.ceil(document.documentElement.scrollHeight)'))
  return layout.optionsFor(contentPx)
}

/**
 * What the request asks the loaded page to wait for, in order (a selector, an expression, a
 * delay), within MAX_WAIT_MS in all: past it the job fails as the page's fault.
 */
async function waitInPage(page: Page, wait: NonNullable<HtmlPdfInput['wait']>): Promise<void> {
  const until = Date.now() + MAX_WAIT_MS
  const left = () => Math.max(1, until - Date.now())
  const late = (what: string) => rejected(`The page's wait ${what} did not end within ${MAX_WAIT_MS / 1000} s.`)
  try {
    if (wait.selector !== undefined) await page.waitForSelector(wait.selector, { timeout: left() })
  } catch (err) {
    if (err instanceof TimeoutError) throw late(`for ${JSON.stringify((wait.selector ?? '').slice(0, 100))}`)
    throw rejected(`The wait's selector is not valid: ${(err as Error).message.split('\n')[0].slice(0, 200)}`)
  }
  try {
    if (wait.expression !== undefined) await page.waitForFunction(wait.expression, { timeout: left(), polling: 100 })
  } catch (err) {
    if (err instanceof TimeoutError) throw late('for its expression')
    throw rejected(`The wait's expression failed: ${(err as Error).message.split('\n')[0].slice(0, 200)}`)
  }
  if (wait.delayMs) {
    if (wait.delayMs > left()) throw late(`of ${wait.delayMs} ms`)
    await new Promise((r) => setTimeout(r, wait.delayMs))
  }
}

/**
 * Job mode: the job, once the browser is booting (main.ts). Its first page renders the job; the
 * browser and its profile go with the run.
 */
export async function renderJob<I extends PageInput = HtmlPdfInput>(
  chromium: StartedChromium,
  profile: string,
  t0: number,
  startup: { spawnedAtMs: number; loadedAtMs: number },
  inPage: PageJob<I> = renderInPage as unknown as PageJob<I>,
): Promise<void> {
  await runUtility<I>(async (ctx) => {
    let browser: Browser | undefined
    try {
      browser = await connectBrowser(chromium)
      const b = browser
      const page =
        (await b
          .waitForTarget((t) => t.type() === 'page', { timeout: HTML_PDF_LIMITS.launchMs })
          .then((t) => t.page())) ?? (await b.newPage())
      closePopups(b, page)
      const tLaunched = Date.now()
      // From the process's start: the browser's first page is ready (compare startup.loadedAtMs).
      const browserReadyAtMs = Math.round(performance.now())
      return await inPage(page, ctx, () => ({ ...startup, browserReadyAtMs, launchMs: tLaunched - t0 }))
    } finally {
      // The profile is thrown away: no orderly shutdown to wait for.
      browser?.disconnect().catch(() => {})
      chromium.kill()
      await chromium.exited
      await rm(profile, { recursive: true, force: true }).catch(() => {})
    }
  })
}

/** Puppeteer on a started browser's pipe, within the launch budget. */
export async function connectBrowser(chromium: StartedChromium): Promise<Browser> {
  const limits = HTML_PDF_LIMITS
  let launchTimer: NodeJS.Timeout | undefined
  return Promise.race([
    puppeteer.connect({ transport: chromium.transport, protocolTimeout: limits.renderMs + 30_000 }),
    chromium.exited.then(() =>
      Promise.reject(
        new Error(
          CHROMIUM_SANDBOX
            ? "Chromium exited while starting, with its sandbox on: the pod's seccomp profile must allow user namespaces (browserSandbox)"
            : 'Chromium exited while starting',
        ),
      ),
    ),
    new Promise<never>(
      (_, reject) =>
        (launchTimer = setTimeout(
          () => reject(new Error(`Chromium did not start within ${limits.launchMs / 1000} s`)),
          limits.launchMs,
        )),
    ),
  ]).finally(() => clearTimeout(launchTimer))
}

/** Popups and new windows are not intercepted by the job page's handler: closed at once. */
export function closePopups(source: Browser | BrowserContext, page: Page): void {
  const close = async (target: Target) => {
    if (target.type() !== 'page') return
    const other = await target.page()
    if (other && other !== page) other.close().catch(() => {})
  }
  if ('createBrowserContext' in source) source.on('targetcreated', close)
  else source.on('targetcreated', close)
}
