import type { Readable } from 'node:stream'
import busboy from 'busboy'
import type { Context } from 'koa'
import { ApiError, invalid } from './api-error.js'
import { parseFileName } from './routes/files.js'

export const isMultipart = (ctx: Context) => /^multipart\/form-data\b/i.test(ctx.get('Content-Type'))

export interface FormLimits {
  files: number
  fields: number
  /** The most bytes of one field's value. */
  fieldBytes: number
  /** What the form is, for the messages: "A multipart run". */
  noun: string
}

export interface FormHandlers {
  /**
   * One file part, handed over one after another as they arrive (the parser waits for each):
   * read `stream` to its end, or throw to refuse the form. `name` is the part's file name as an
   * upload's (see fileNameOf); the message of an ApiError with details is prefixed with it.
   */
  file(field: string, name: string, stream: Readable): Promise<void>
  /** One field; throw to refuse the form. A value past `fieldBytes` is refused before it comes here. */
  field(field: string, value: string): void
}

/**
 * Reads a `multipart/form-data` body within its limits, handing each part over as it comes. The
 * first refusal answers the request (the rest of the body is drained, so the answer can be sent);
 * a handler that throws never reaches the parser's event loop.
 */
export async function readForm(ctx: Context, limits: FormLimits, handlers: FormHandlers): Promise<void> {
  let parser: busboy.Busboy
  try {
    parser = busboy({
      headers: ctx.req.headers,
      limits: {
        files: limits.files,
        fields: limits.fields,
        fieldSize: limits.fieldBytes,
        parts: limits.files + limits.fields,
      },
    })
  } catch {
    throw invalid('The multipart body has no boundary in its Content-Type.', [
      { path: 'Content-Type', message: 'must be multipart/form-data with a boundary' },
    ])
  }
  await new Promise<void>((resolve, reject) => {
    let failed = false
    const fail = (err: unknown) => {
      if (failed) return
      failed = true
      ctx.req.unpipe(parser)
      ctx.req.resume() // drain what is left, so the answer can be sent
      reject(err)
    }
    // Files are handled one after another as they arrive; the parser waits for each.
    let chain = Promise.resolve()
    // Nothing a handler throws may escape into the parser's event loop (it would end the process).
    const guarded =
      <A extends unknown[]>(handle: (...args: A) => void) =>
      (...args: A) => {
        try {
          handle(...args)
        } catch (err) {
          fail(err)
        }
      }
    parser.on(
      'file',
      guarded((rawField: string | undefined, stream: Readable, info: busboy.FileInfo) => {
        // A form that ends mid-file errs this stream, perhaps before it is read: the parser's own
        // error answers the request; without a listener here it would end the process.
        stream.on('error', () => {})
        const field = rawField ?? ''
        const name = fileNameOf(info.filename)
        chain = chain.then(async () => {
          if (failed) return void stream.resume()
          try {
            await handlers.file(field, name, stream)
          } catch (err) {
            stream.resume()
            fail(
              err instanceof ApiError && err.details
                ? new ApiError(err.code, `${name}: ${err.message}`, err.details, err.headers)
                : err,
            )
          }
        })
      }),
    )
    parser.on(
      'field',
      guarded((rawField: string | undefined, value: string, info: busboy.FieldInfo) => {
        // A part without a name has none (busboy gives undefined).
        const field = rawField ?? ''
        if (info.valueTruncated)
          return fail(
            invalid(`The field ${field.slice(0, 64)} is larger than ${limits.fieldBytes / (1024 * 1024)} MB.`, [
              { path: field.slice(0, 64), message: 'is too large' },
            ]),
          )
        handlers.field(field, value)
      }),
    )
    parser.on('filesLimit', () =>
      fail(
        invalid(`${limits.noun} takes at most ${limits.files} files.`, [
          { path: 'files', message: `more than ${limits.files}` },
        ]),
      ),
    )
    parser.on('partsLimit', () =>
      fail(invalid('The multipart body has too many parts.', [{ path: '(root)', message: 'too many parts' }])),
    )
    parser.on('fieldsLimit', () =>
      fail(invalid('The multipart body has too many fields.', [{ path: '(root)', message: 'too many fields' }])),
    )
    parser.on('error', () =>
      fail(
        invalid('The multipart body could not be read.', [
          { path: '(root)', message: 'is not valid multipart/form-data' },
        ]),
      ),
    )
    parser.on('close', () => void chain.then(() => (failed ? undefined : resolve())))
    ctx.req.on('error', fail)
    ctx.req.pipe(parser)
  })
}

/** A part's file name as an upload's: its last path segment (browsers may send a path), else `file`. */
export function fileNameOf(raw: string | undefined): string {
  const last =
    (raw ?? '')
      .split(/[/\\]/)
      .pop()
      ?.replace(/[\u0000-\u001f\u007f]/g, '') ?? ''
  if (!last || last === '.' || last === '..') return 'file'
  try {
    return parseFileName(last)
  } catch {
    return 'file'
  }
}
