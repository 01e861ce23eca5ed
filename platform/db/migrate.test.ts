import { createServer, type Socket } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { migrateDatabase } from './migrate.js'

describe('migrateDatabase', () => {
  // A peer that takes the connection and never answers: what a database behind a path that drops
  // its packets, or one that vanished, looks like to the client.
  const held: Socket[] = []
  const silent = createServer((socket) => void held.push(socket))
  afterAll(() => {
    for (const s of held) s.destroy()
    silent.close()
  })

  it('gives up on a database that never answers within seconds, so the caller can retry', async () => {
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r))
    const { port } = silent.address() as { port: number }
    await expect(
      migrateDatabase(`postgres://dutil:secret@127.0.0.1:${port}/dutil`, { info: () => {} }),
    ).rejects.toThrow(/timeout/i)
    // Without a bound it would wait for ever (TCP keeps a silent connection open): the test's
    // 30 s timeout fails it.
  }, 30_000)
})
