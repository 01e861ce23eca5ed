import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readTerminationMessage, tailLines } from './termination-message.js'

describe('tailLines', () => {
  it('keeps the last lines, counting a trailing newline as the end of the last line', () => {
    expect(tailLines(Buffer.from('a\nb\nc\n'), 2, 100)).toBe('b\nc\n')
    expect(tailLines(Buffer.from('a\nb\nc'), 2, 100)).toBe('b\nc')
    expect(tailLines(Buffer.from('only'), 80, 100)).toBe('only')
    expect(tailLines(Buffer.from(''), 80, 100)).toBe('')
  })
  it('then caps the bytes', () => {
    expect(tailLines(Buffer.from('0123456789\n'), 80, 4)).toBe('789\n')
  })
})

describe('readTerminationMessage', () => {
  let dir: string
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tm-'))
  })
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true })
  })

  it('reads the message file, capped at 4096 bytes', async () => {
    const messageFile = path.join(dir, 'm1')
    await fs.writeFile(messageFile, 'x'.repeat(5000))
    const msg = await readTerminationMessage({ messageFile, logFile: '/nonexistent', policy: undefined, exitCode: 1 })
    expect(msg).toHaveLength(4096)
  })

  it('falls back to the log tail only with FallbackToLogsOnError and a failure', async () => {
    const messageFile = path.join(dir, 'empty')
    const logFile = path.join(dir, 'log')
    await fs.writeFile(messageFile, '')
    await fs.writeFile(logFile, Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n') + '\n')
    const fallback = await readTerminationMessage({
      messageFile,
      logFile,
      policy: 'FallbackToLogsOnError',
      exitCode: 2,
    })
    expect(fallback?.split('\n')[0]).toBe('line 20')
    expect(fallback?.endsWith('line 99\n')).toBe(true)
    expect(
      await readTerminationMessage({ messageFile, logFile, policy: 'FallbackToLogsOnError', exitCode: 0 }),
    ).toBeUndefined()
    expect(await readTerminationMessage({ messageFile, logFile, policy: 'File', exitCode: 2 })).toBeUndefined()
  })
})
