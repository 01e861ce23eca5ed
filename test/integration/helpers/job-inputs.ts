import { afterAll, beforeAll } from 'vitest'
import { FileServer } from '../../support/file-server.js'
import { createKey } from './keys.js'

/** What a test file that runs jobs needs: a loopback file server for their inputs, and its own API key. */
export interface JobInputs {
  readonly files: FileServer
  /** Set before the file's first test. */
  readonly key: string
}

/** Starts the file server and makes the key before the file's tests; stops the server after them. */
export function jobInputs(): JobInputs {
  const state = { files: new FileServer(), key: '' }
  beforeAll(async () => {
    await state.files.start()
    state.key = (await createKey()).key
  })
  afterAll(() => state.files.stop())
  return state
}
