import { readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { makePdf } from '../support/pdfs.js'
import { fileEntry, writeZip } from '../support/zip-writer.js'
import { REPO_ROOT } from './platform.js'

/** The port `make dev` serves its sample files on (the README's walkthrough names it). */
export const SAMPLES_PORT = 8000

/** A file the walkthrough can give a utility: its body and content type. */
interface Sample {
  body: Buffer
  type: string
}

/** The walkthrough's sample inputs, one for each utility (made, not downloaded: nothing leaves this machine). */
export async function makeSamples(): Promise<Map<string, Sample>> {
  const pdf = await makePdf(3)
  const html = Buffer.from(
    '<!doctype html><html><head><meta charset="utf-8"><title>dutil sample</title></head>' +
      '<body><h1>Hello from dutil</h1><p>This page was rendered to PDF by the html-pdf utility.</p></body></html>',
  )
  const zip = writeZip([
    fileEntry('report.pdf', pdf),
    fileEntry('notes/readme.txt', Buffer.from('A sample text file.\n')),
  ])
  return new Map<string, Sample>([
    ['sample.pdf', { body: pdf, type: 'application/pdf' }],
    ['sample.html', { body: html, type: 'text/html; charset=utf-8' }],
    ['sample.zip', { body: zip, type: 'application/zip' }],
    [
      'sample.xls',
      {
        body: readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'workbooks', 'libreoffice.xls')),
        type: 'application/vnd.ms-excel',
      },
    ],
  ])
}

/** Serves the samples on 127.0.0.1 at `/<name>` (GET and HEAD); `port` 0 takes a free one. */
export async function serveSamples(
  port = SAMPLES_PORT,
): Promise<{ url: string; names: string[]; close(): Promise<void> }> {
  const samples = await makeSamples()
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.slice(1))
    const sample = samples.get(name)
    if (!sample || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' })
      return void res.end(`not found; the samples are ${[...samples.keys()].join(', ')}\n`)
    }
    res.writeHead(200, { 'content-type': sample.type, 'content-length': sample.body.length })
    res.end(req.method === 'HEAD' ? undefined : sample.body)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    names: [...samples.keys()],
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}
