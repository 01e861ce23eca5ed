import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, inject } from 'vitest'
import { CallbackReceiver } from '../../support/callback-receiver.js'
import { FileServer } from '../../support/file-server.js'
import { makePdf } from '../../support/pdfs.js'

/** What a test file about callbacks needs: a receiver behind the tests' CA, and a PDF and a non-PDF to split. */
export interface CallbackInputs {
  readonly receiver: CallbackReceiver
  readonly files: FileServer
  /** Set before the file's first test. */
  readonly pdfUrl: string
  readonly notPdfUrl: string
}

/** Starts the receiver and the file server (a PDF of `pages` pages on it) before the file's tests; stops them after. */
export function callbackInputs(pages: number): CallbackInputs {
  const state = {
    receiver: undefined as unknown as CallbackReceiver,
    files: new FileServer(),
    pdfUrl: '',
    notPdfUrl: '',
  }
  beforeAll(async () => {
    const tls = inject('callbackTls')
    state.receiver = await new CallbackReceiver({
      cert: readFileSync(tls.certFile),
      key: readFileSync(tls.keyFile),
    }).start()
    await state.files.start()
    state.pdfUrl = state.files.add(`${pages}-pages.pdf`, await makePdf(pages))
    state.notPdfUrl = state.files.add('not.pdf', Buffer.from('<html>not a pdf</html>'), 'text/html')
  })
  afterAll(async () => {
    await state.receiver.stop()
    await state.files.stop()
  })
  return state
}
