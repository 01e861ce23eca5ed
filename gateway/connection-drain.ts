import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'

/**
 * How an HTTP server lets its keep-alive connections go at shutdown without failing a request.
 *
 * Closing an idle keep-alive connection races with the client: one that picks it for its next
 * request as the close arrives sees "other side closed" with no answer (HTTP/1.1 has no way to
 * say "done" on an idle connection but to close it). So at drain every connection is closed
 * after its next answer instead (`Connection: close`, which the client reads before it reuses
 * the connection), answers in flight included; only a connection idle for the whole window is
 * closed, by which time its client is not busy with it. The server keeps listening during the
 * window: by then the pod is out of its Service (preStop), and a straggler routed to it on
 * another node's stale rules is answered (and closed) rather than refused.
 */
export class ConnectionDrain {
  private draining = false
  private readonly inFlight = new Set<ServerResponse>()

  constructor(private readonly idleWindowMs: number) {}

  /** `handler`, with its answers marked `Connection: close` once draining. */
  wrap(handler: RequestListener): RequestListener {
    return (req: IncomingMessage, res: ServerResponse) => {
      if (this.draining) res.setHeader('Connection', 'close')
      else {
        this.inFlight.add(res)
        res.once('close', () => this.inFlight.delete(res))
      }
      handler(req, res)
    }
  }

  /**
   * Drains `servers`: resolves once each has no connection left (each closes after its next
   * answer; those idle for the window are closed then; answers still going are waited for).
   */
  async drain(servers: Server[]): Promise<void> {
    this.draining = true
    for (const res of this.inFlight) if (!res.headersSent) res.setHeader('Connection', 'close')
    const until = Date.now() + this.idleWindowMs
    while (Date.now() < until && (await Promise.all(servers.map(connectionsOf))).some((n) => n > 0))
      await new Promise((r) => setTimeout(r, 25))
    await Promise.all(
      servers.map(async (server) => {
        const closed = new Promise((resolve) => server.close(resolve))
        // An answer whose headers went out before the drain (a download) leaves its connection
        // open after it ends: it is closed as soon as it is idle.
        const sweep = setInterval(() => server.closeIdleConnections(), 100)
        await closed
        clearInterval(sweep)
      }),
    )
  }
}

function connectionsOf(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((err, n) => resolve(err ? 0 : n)))
}
