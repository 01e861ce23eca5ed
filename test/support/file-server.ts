import http from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A loopback HTTP server for input files. `/files/<name>` serves a registered file;
 * `/slow/<name>?ms=N` waits N ms first; `/stall` accepts and never answers; `/trickle?every=N`
 * answers 200 and sends one byte every N ms, never ending (a download that is alive but endless);
 * `/status/<code>` answers with that status; `/redirect?to=<url>` answers 302 to that URL.
 */
export class FileServer {
  private readonly files = new Map<string, { body: Buffer; type: string }>()
  private readonly server = http.createServer((req, res) => this.handle(req, res))
  private readonly stalled = new Set<http.ServerResponse>()
  private readonly trickles = new Set<NodeJS.Timeout>()
  /** The path of every request made to this server, in order. */
  readonly requested: string[] = []
  url = ''

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  /** A URL of this server that redirects to `to`. */
  redirect(to: string): string {
    return `${this.url}/redirect?to=${encodeURIComponent(to)}`
  }

  add(name: string, body: Buffer | Uint8Array, type = 'application/pdf'): string {
    this.files.set(name, { body: Buffer.from(body), type })
    return `${this.url}/files/${name}`
  }

  remove(name: string): void {
    this.files.delete(name)
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url)
    this.requested.push(url.pathname)
    const [, kind, name] = url.pathname.split('/')
    if (kind === 'stall') {
      this.stalled.add(res)
      return
    }
    if (kind === 'trickle') {
      this.stalled.add(res)
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      res.write('x')
      const timer = setInterval(() => res.write('x'), Number(url.searchParams.get('every') ?? 20_000))
      this.trickles.add(timer)
      res.on('close', () => {
        clearInterval(timer)
        this.trickles.delete(timer)
        this.stalled.delete(res)
      })
      return
    }
    if (kind === 'redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' })
      return void res.end()
    }
    if (kind === 'status') {
      res.statusCode = Number(name)
      return void res.end('no')
    }
    const file = this.files.get(name ?? '')
    if (!file) {
      res.statusCode = 404
      return void res.end('not found')
    }
    const send = () => {
      res.setHeader('content-type', file.type)
      res.end(file.body)
    }
    if (kind === 'slow') setTimeout(send, Number(url.searchParams.get('ms') ?? 1000))
    else send()
  }

  async stop(): Promise<void> {
    for (const t of this.trickles) clearInterval(t)
    for (const r of this.stalled) r.destroy()
    this.server.closeAllConnections()
    await new Promise((r) => this.server.close(r))
  }
}
