import { Worker } from 'node:worker_threads'
import { rejected } from '../common/runner-error.js'

const WORKER_URL = new URL('./markdown.worker.js', import.meta.url)

/** What one Markdown page may take to render: a plain 2 MiB document needs some 180 MB and 1.5 s. */
export const MARKDOWN_LIMITS = { heapMb: 384, stackMb: 4, ms: 30_000 }

/**
 * A Markdown page's HTML (markdown.ts), rendered in a one-off worker within MARKDOWN_LIMITS: a
 * text that needs more memory, a deeper stack or more time than those is refused
 * (upstream_rejected) and the worker is ended.
 */
export function renderMarkdown(
  text: string,
  stylesheet: string | undefined,
  workerUrl: URL = WORKER_URL,
  limits = MARKDOWN_LIMITS,
): Promise<string> {
  const refused = (why: string) =>
    rejected(`The Markdown is too large or too deeply nested to render: ${why}. Split it, or flatten its nesting.`)
  return new Promise<string>((resolve, reject) => {
    const worker = new Worker(workerUrl, {
      workerData: { text, stylesheet },
      resourceLimits: { maxOldGenerationSizeMb: limits.heapMb, stackSizeMb: limits.stackMb },
    })
    const timer = setTimeout(() => {
      reject(refused(`it took more than ${limits.ms / 1000} s`))
      void worker.terminate()
    }, limits.ms)
    worker.once('message', (html: string) => {
      clearTimeout(timer)
      resolve(html)
      void worker.terminate()
    })
    worker.once('error', (err: Error & { code?: string }) => {
      clearTimeout(timer)
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') reject(refused(`it needs more than ${limits.heapMb} MB of memory`))
      else if (err.name === 'RangeError') reject(refused('it nests deeper than the parser can follow'))
      else reject(err)
    })
    worker.once('exit', () => {
      clearTimeout(timer)
      reject(refused('the renderer stopped'))
    })
  })
}
