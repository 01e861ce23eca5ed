import yauzl from 'yauzl'

export interface ZipEntryRead {
  name: string
  data: Buffer
  compressionMethod: number
  lastModified: Date
}

/** Every file entry of a zip, read with yauzl (names as stored). */
export function readZip(buffer: Buffer): Promise<ZipEntryRead[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err)
      const out: ZipEntryRead[] = []
      zip.on('error', reject)
      zip.on('end', () => resolve(out))
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) return zip.readEntry()
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e)
          const chunks: Buffer[] = []
          stream.on('data', (c: Buffer) => chunks.push(c))
          stream.on('error', reject)
          stream.on('end', () => {
            out.push({
              name: entry.fileName,
              data: Buffer.concat(chunks),
              compressionMethod: entry.compressionMethod,
              lastModified: entry.getLastModDate(),
            })
            zip.readEntry()
          })
        })
      })
      zip.readEntry()
    })
  })
}
