import { parentPort, workerData } from 'node:worker_threads'
import { markdownPage } from './markdown.js'

/**
 * Renders one Markdown page inside a worker thread whose heap, stack and time are capped
 * (markdown-in-worker.ts): a text built to make the parser explode fails as a classified
 * refusal instead of taking the runner down.
 */
const { text, stylesheet } = workerData as { text: string; stylesheet?: string }
parentPort!.postMessage(markdownPage(text, stylesheet))
