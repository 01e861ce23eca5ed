/**
 * html-image renders Markdown pages with html-pdf's worker (the page loader is html-pdf's): its
 * bundle needs the worker program beside its own chunks, where the loader looks for it.
 */
import '../html-pdf/markdown.worker.js'
