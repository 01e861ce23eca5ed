/**
 * The bytes of a stream of at most `maxBytes`: past that, reading stops and `tooLarge()` is
 * thrown (leaving the loop destroys a Node stream, so nothing more is read). What comes from
 * outside (a request body, a part of a form, an object a runner wrote) is read this way.
 */
export async function readAtMost(
  stream: AsyncIterable<Uint8Array>,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    size += chunk.length
    if (size > maxBytes) throw tooLarge()
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
  }
  return Buffer.concat(chunks)
}
