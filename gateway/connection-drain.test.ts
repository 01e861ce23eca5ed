import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { ConnectionDrain } from './connection-drain.js'

interface Answer {
  status: number
  connection: string | undefined
  body: string
  socket: Socket
}

/** A server whose `/slow` answers once `release` is called, everything else at once. */
async function server(windowMs: number) {
  const drain = new ConnectionDrain(windowMs)
  let release = () => {}
  const released = new Promise<void>((r) => (release = r))
  const s = http.createServer(
    { keepAliveTimeout: 60_000 },
    drain.wrap((req, res) => {
      if (req.url === '/slow') void released.then(() => res.end('slow'))
      else res.end('ok')
    }),
  )
  s.listen(0, '127.0.0.1')
  await new Promise((r) => s.once('listening', r))
  servers.push(s)
  return { drain, s, port: (s.address() as AddressInfo).port, release }
}

function get(port: number, path: string, agent: http.Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (body += c))
      res.on('end', () =>
        resolve({ status: res.statusCode!, connection: res.headers.connection, body, socket: req.socket! }),
      )
    })
    req.on('error', reject)
  })
}

const servers: http.Server[] = []
const agents: http.Agent[] = []
function keepAliveAgent() {
  const a = new http.Agent({ keepAlive: true, maxSockets: 1 })
  agents.push(a)
  return a
}
afterEach(() => {
  for (const a of agents.splice(0)) a.destroy()
  for (const s of servers.splice(0)) s.closeAllConnections()
})

describe('ConnectionDrain', () => {
  it('answers the next request on an idle keep-alive connection, closing it after, rather than closing it under the client', async () => {
    const { drain, s, port } = await server(10_000)
    const agent = keepAliveAgent()
    const first = await get(port, '/', agent)
    expect(first.connection).toBe('keep-alive')
    const started = Date.now()
    const drained = drain.drain([s])
    // The client reuses the connection it holds, as a busy client does, after the drain began.
    const second = await get(port, '/', agent)
    expect(second).toMatchObject({ status: 200, body: 'ok', connection: 'close' })
    expect(second.socket).toBe(first.socket)
    await drained
    // Done once the connection went, long before the idle window.
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(s.listening).toBe(false)
  })

  it('marks an answer in flight when the drain begins Connection: close, and waits for it', async () => {
    const { drain, s, port, release } = await server(10_000)
    const agent = keepAliveAgent()
    const slow = get(port, '/slow', agent)
    await new Promise((r) => setTimeout(r, 100))
    let done = false
    const drained = drain.drain([s]).then(() => (done = true))
    await new Promise((r) => setTimeout(r, 200))
    expect(done).toBe(false)
    release()
    expect(await slow).toMatchObject({ status: 200, body: 'slow', connection: 'close' })
    await drained
  })

  it('closes a connection idle for the whole window at its end, and serves a new connection meanwhile', async () => {
    const { drain, s, port } = await server(600)
    const idle = keepAliveAgent()
    const held = await get(port, '/', idle)
    const closed = new Promise((r) => held.socket.once('close', r))
    const started = Date.now()
    const drained = drain.drain([s])
    // A straggler that connects during the window is answered, and told the connection closes.
    expect(await get(port, '/', keepAliveAgent())).toMatchObject({ status: 200, connection: 'close' })
    await drained
    await closed
    expect(Date.now() - started).toBeGreaterThanOrEqual(550)
    await expect(get(port, '/', keepAliveAgent())).rejects.toMatchObject({ code: 'ECONNREFUSED' })
  })
})
