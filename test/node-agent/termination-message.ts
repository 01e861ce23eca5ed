// The terminated container's message, as kubelet reads it: the termination message file (at most
// 4096 bytes), or with FallbackToLogsOnError and a non-zero exit the tail of the log (80 lines,
// 2048 bytes).
import fs from 'node:fs/promises'

export const MAX_MESSAGE_BYTES = 4096
export const FALLBACK_LOG_LINES = 80
export const FALLBACK_LOG_BYTES = 2048

/** The last `maxLines` lines of `buf`, then at most its last `maxBytes` bytes. */
export function tailLines(buf: Buffer, maxLines: number, maxBytes: number): string {
  const end = buf.length
  let start = end
  let lines = 0
  // A trailing newline ends the last line rather than starting an empty one.
  if (end > 0 && buf[end - 1] === 0x0a) start = end - 1
  while (start > 0) {
    if (buf[start - 1] === 0x0a) {
      lines++
      if (lines >= maxLines) break
    }
    start--
  }
  if (end - start > maxBytes) start = end - maxBytes
  return buf.subarray(start, end).toString('utf8')
}

async function readTail(file: string, bytes: number): Promise<Buffer> {
  const handle = await fs.open(file, 'r')
  try {
    const { size } = await handle.stat()
    const length = Math.min(size, bytes)
    const buf = Buffer.alloc(length)
    await handle.read(buf, 0, length, size - length)
    return buf
  } finally {
    await handle.close()
  }
}

async function readHead(file: string, bytes: number): Promise<Buffer> {
  const handle = await fs.open(file, 'r')
  try {
    const buf = Buffer.alloc(bytes)
    const { bytesRead } = await handle.read(buf, 0, bytes, 0)
    return buf.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

export async function readTerminationMessage(opts: {
  messageFile: string
  logFile: string
  policy: string | undefined
  exitCode: number
}): Promise<string | undefined> {
  const message = await readHead(opts.messageFile, MAX_MESSAGE_BYTES).catch(() => Buffer.alloc(0))
  if (message.length > 0) return message.toString('utf8')
  if (opts.policy === 'FallbackToLogsOnError' && opts.exitCode !== 0) {
    // Lines are short in practice; reading 64 KiB is enough to find the last 80 of them.
    const tail = await readTail(opts.logFile, 64 * 1024).catch(() => Buffer.alloc(0))
    const text = tailLines(tail, FALLBACK_LOG_LINES, FALLBACK_LOG_BYTES)
    return text.length > 0 ? text : undefined
  }
  return undefined
}
