import { describe, expect, it } from 'vitest'
import { newFileBatch, newFileId } from '../../contract/ids.js'
import { checkMergePdf, MERGE_PDF_LIMITS } from './utility.js'

const ULIDS = Array.from({ length: 12 }, (_, i) =>
  `01JCZ8Y3E7XK2M9QW4T6R5S${String(i).padStart(3, '0')}`.replace(/[ILOU]/g, '0'),
)
const stored = (i: number, file = 'page-001.pdf') => ({
  url: `s3://dutil/split-pdf/2026-11-27/job_${ULIDS[i]}/${file}`,
})

describe('merge-pdf input checks', () => {
  it('takes s3:// inputs from up to the limit of different jobs, and any number of files of one job', () => {
    const fromOne = Array.from({ length: 50 }, (_, i) => stored(0, `page-${String(i + 1).padStart(3, '0')}.pdf`))
    expect(checkMergePdf({ files: fromOne })).toEqual([])
    const atLimit = Array.from({ length: MERGE_PDF_LIMITS.maxStorageSourceJobs }, (_, i) => stored(i))
    expect(checkMergePdf({ files: [...atLimit, { url: 'https://example.com/a.pdf' }] })).toEqual([])
  })

  it('names the first input from one job too many', () => {
    const files = [{ url: 'https://example.com/a.pdf' }, ...Array.from({ length: 12 }, (_, i) => stored(i))]
    expect(checkMergePdf({ files })).toEqual([
      {
        path: `files.${MERGE_PDF_LIMITS.maxStorageSourceJobs + 1}.url`,
        message: `s3:// inputs may come from at most ${MERGE_PDF_LIMITS.maxStorageSourceJobs} different jobs or upload requests in one merge`,
      },
    ])
  })

  it("counts one request's uploads once, and each upload made alone as its own", () => {
    const batch = newFileBatch()
    const upload = (id: string) => ({ url: `s3://dutil/uploads/2026-11-28/${id}/part.pdf` })
    const together = Array.from({ length: 100 }, () => upload(batch()))
    expect(checkMergePdf({ files: together })).toEqual([])
    const alone = Array.from({ length: MERGE_PDF_LIMITS.maxStorageSourceJobs + 1 }, () => upload(newFileId()))
    expect(checkMergePdf({ files: alone })).toEqual([
      {
        path: `files.${MERGE_PDF_LIMITS.maxStorageSourceJobs}.url`,
        message: `s3:// inputs may come from at most ${MERGE_PDF_LIMITS.maxStorageSourceJobs} different jobs or upload requests in one merge`,
      },
    ])
  })
})
