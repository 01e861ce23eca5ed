import { passwordProblems, passwordSchema } from '../common/password-schema.js'
import Type from 'typebox'
import type { UtilityDefinition } from '../../contract/utility.js'
import { StorageOrHttpUrl } from '../../contract/url-schemas.js'
import { editPdf } from '../edit-pdf/utility.js'
import { PDF_INFO_LIMITS } from './limits.js'

export { PDF_INFO_LIMITS }

export const pdfInfo: UtilityDefinition = {
  slug: 'pdf-info',
  name: "Read a PDF's facts",
  description:
    "Reads a PDF's facts with qpdf: its page count, PDF version, whether it is encrypted or needs a password, whether it is linearized (fast web view), and its document information (title, author, subject, keywords, creator, producer, creation and modification dates); stores nothing unless asked for its bookmarks. At most 150 MB.",
  category: 'pdf',
  icon: 'info',
  target: 'none',
  maxDurationSeconds: 300,
  inputSchema: Type.Object(
    {
      url: StorageOrHttpUrl,
      bookmarks: Type.Optional(
        Type.Boolean({
          description: `Also stores the PDF's bookmarks (its outline) as bookmarks.json: [{ title, page, children }], page from 1 or null (at most ${PDF_INFO_LIMITS.maxBookmarks.toLocaleString('en')}).`,
        }),
      ),
      password: Type.Optional(
        passwordSchema(
          "Opens a PDF protected by a password (its user or owner password): its facts are read as without one. Sealed where the job's input is stored, used by its runner alone, never shown again.",
        ),
      ),
    },
    { additionalProperties: false, description: 'The PDF to read.' },
  ),
  checkInput: (input) => passwordProblems((input as { password?: unknown }).password, 'password'),
  exampleInput: { url: 'https://example.com/contract.pdf' },
  enabled: true,
  runner: {
    // qpdf's image: edit-pdf's, with its own program.
    ...editPdf.runner,
    entry: 'dist/runners/pdf-info/bundle/main.js',
    // The main thread downloads to disk and reads qpdf's description (at most 16 MB of JSON).
    maxHeapMb: 160,
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
    concurrency: 6,
    // The PDF only.
    scratchSizeLimit: '256Mi',
  },
}
