import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Context } from 'koa'
import { afterEach, describe, expect, it } from 'vitest'
import { syncWait, type SyncWait } from './sync-wait.js'

let server: http.Server | undefined
afterEach(() => server?.close())

/** A request whose client sends its body, then hangs up after `hangUpMs`; the wait begins `beginMs` after it arrived. */
async function waitBegunAfter(
  beginMs: number,
  hangUpMs: number,
): Promise<{ wait: SyncWait; res: http.ServerResponse }> {
  const begun = new Promise<{ wait: SyncWait; res: http.ServerResponse }>((resolve) => {
    server = http.createServer((req, res) => {
      req.resume()
      setTimeout(() => resolve({ wait: syncWait({ req, res } as Context, new AbortController().signal), res }), beginMs)
    })
  })
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
  const client = http.request({ port: (server!.address() as AddressInfo).port, method: 'POST' })
  client.on('error', () => {})
  client.end('{}')
  setTimeout(() => client.destroy(), hangUpMs)
  return begun
}

describe('syncWait', () => {
  it('sees a client that hangs up while the run waits', async () => {
    const { wait } = await waitBegunAfter(0, 100)
    expect(wait.clientGone()).toBe(false)
    await new Promise((r) => wait.signal.addEventListener('abort', r))
    expect(wait.clientGone()).toBe(true)
    wait.dispose()
  })

  it('sees a client that hung up before the wait began (while its run was accepted)', async () => {
    const { wait } = await waitBegunAfter(300, 50)
    expect(wait.signal.aborted).toBe(true)
    expect(wait.clientGone()).toBe(true)
    wait.dispose()
  })

  it('does not count the close that follows a finished answer', async () => {
    const { wait, res } = await waitBegunAfter(0, 10_000)
    await new Promise<void>((r) => res.end('ok', r))
    res.destroy()
    await new Promise((r) => setTimeout(r, 20))
    expect(wait.clientGone()).toBe(false)
    wait.dispose()
  })
})
