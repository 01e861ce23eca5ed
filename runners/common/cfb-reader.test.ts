import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import XLSX from 'xlsx'
import { describe, expect, it } from 'vitest'
import { CfbError, readCfbStream } from './cfb-reader.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const workbook = (name: string) => readFileSync(join(REPO, 'test/fixtures/workbooks', name))

describe('compound file reader', () => {
  it('reads every top-level stream as SheetJS CFB does, small (mini stream) and large ones', () => {
    let small = 0
    let streams = 0
    for (const name of ['libreoffice.xls', 'xlwt.xls']) {
      const file = workbook(name)
      const cfb = XLSX.CFB.read(file, { type: 'buffer' })
      for (const [i, path] of cfb.FullPaths.entries()) {
        const entry = cfb.FileIndex[i]
        // Streams of the root storage: 'Root Entry/Workbook'.
        if (entry.type !== 2 || path.split('/').length !== 2) continue
        streams++
        const ours = readCfbStream(file, entry.name)
        expect(ours, `${name} ${path}`).not.toBeNull()
        expect(Buffer.compare(ours!, Buffer.from(entry.content as Uint8Array)), `${name} ${path}`).toBe(0)
        if (ours!.length < 4096) small++
      }
    }
    expect(streams).toBeGreaterThanOrEqual(6)
    expect(small).toBeGreaterThan(0)
    expect(readCfbStream(workbook('xlwt.xls'), 'workbook')?.length).toBeGreaterThan(4096)
    expect(readCfbStream(workbook('xlwt.xls'), 'Book')).toBeNull()
  })

  it('ends a looping or out-of-file chain in CfbError', () => {
    const file = Buffer.from(workbook('xlwt.xls'))
    // The FAT's first sector: make every entry point at sector 0, a loop for any chain through it.
    const fatSector = file.readUInt32LE(76)
    const at = (fatSector + 1) * 512
    for (let i = 0; i < 128; i++) file.writeUInt32LE(0, at + i * 4)
    expect(() => readCfbStream(file, 'Workbook')).toThrow(CfbError)
    const cut = workbook('xlwt.xls').subarray(0, 4096)
    expect(() => readCfbStream(cut, 'Workbook')).toThrow(CfbError)
    expect(() => readCfbStream(Buffer.alloc(600), 'Workbook')).toThrow(CfbError)
  })
})
