import https from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedCallback {
  path: string
  at: number
  headers: Record<string, string>
  /** The raw body exactly as received (what the signature covers). */
  body: string
}

/** How the receiver answers one request: a status, or a function that may wait first. */
export type Reply = number | 'stall' | ((req: ReceivedCallback) => Promise<number | 'stall'> | number | 'stall')

/**
 * An https callback receiver on loopback with a certificate from the test CA. Each path has a
 * script of replies, one per request (the last one repeats); unknown paths answer 200.
 * `stall` accepts the request and never answers.
 */
export class CallbackReceiver {
  private readonly scripts = new Map<string, Reply[]>()
  private readonly received: ReceivedCallback[] = []
  private readonly stalled = new Set<ServerResponse>()
  private readonly waiters = new Set<() => void>()
  private readonly server: https.Server
  port = 0

  constructor(tls: { cert: Buffer; key: Buffer }) {
    this.server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => void this.handle(req, res))
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r))
    this.port = (this.server.address() as AddressInfo).port
    return this
  }

  /** A fresh path with its reply script; returns the callback URL (`https://localhost:<port>/…`). */
  url(path: string, ...replies: Reply[]): string {
    this.scripts.set(path, replies.length ? replies : [200])
    return `https://localhost:${this.port}${path}`
  }

  requests(path: string): ReceivedCallback[] {
    return this.received.filter((r) => r.path === path)
  }

  /** Resolves once `path` has received `count` requests (or rejects after `timeoutMs`). */
  async waitFor(path: string, count: number, timeoutMs = 60_000): Promise<ReceivedCallback[]> {
    const deadline = Date.now() + timeoutMs
    while (this.requests(path).length < count) {
      const left = deadline - Date.now()
      if (left <= 0)
        throw new Error(`${path}: ${this.requests(path).length} of ${count} callbacks after ${timeoutMs} ms`)
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t)
          this.waiters.delete(done)
          resolve()
        }
        const t = setTimeout(done, Math.min(left, 1000))
        this.waiters.add(done)
      })
    }
    return this.requests(path)
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const path = new URL(req.url ?? '/', 'https://localhost').pathname
    const got: ReceivedCallback = {
      path,
      at: Date.now(),
      headers: Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]),
      ),
      body: Buffer.concat(chunks).toString('utf8'),
    }
    const script = this.scripts.get(path) ?? [200]
    const index = this.requests(path).length
    this.received.push(got)
    for (const w of [...this.waiters]) w()
    const reply = script[Math.min(index, script.length - 1)]
    const answer = typeof reply === 'function' ? await reply(got) : reply
    if (answer === 'stall') {
      this.stalled.add(res)
      return
    }
    res.statusCode = answer
    if (answer >= 300 && answer < 400) res.setHeader('location', `https://localhost:${this.port}/redirected${path}`)
    res.end(answer < 300 ? 'ok' : 'no')
  }

  async stop(): Promise<void> {
    for (const r of this.stalled) r.destroy()
    this.server.closeAllConnections()
    await new Promise((r) => this.server.close(r))
  }
}
