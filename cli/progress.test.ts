import { describe, expect, it } from 'vitest'
import { progressLine, uploadProgress } from './progress.js'

describe('upload progress', () => {
  it('draws a bar of the share sent, with the megabytes', () => {
    expect(progressLine('scan.pdf', 0, 100 * 1024 ** 2, 10)).toBe('scan.pdf [..........]   0%  0.0 of 100.0 MB')
    expect(progressLine('scan.pdf', 64 * 1024 ** 2, 100 * 1024 ** 2, 10)).toBe(
      'scan.pdf [######....]  64%  64.0 of 100.0 MB',
    )
    expect(progressLine('scan.pdf', 100 * 1024 ** 2, 100 * 1024 ** 2, 10)).toBe(
      'scan.pdf [##########] 100%  100.0 of 100.0 MB',
    )
  })

  it('redraws in place on a terminal at most every 100 ms and ends its line; writes nothing to a pipe', () => {
    const written: string[] = []
    const tty = { isTTY: true, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream
    let t = 1000
    const report = uploadProgress(tty, 'a.pdf', () => t)
    report(10, 100)
    t += 50
    report(20, 100) // too soon: skipped
    t += 100
    report(100, 100)
    expect(written).toHaveLength(2)
    expect(written[0]).toMatch(/^\ra\.pdf \[.*\]  10%/)
    expect(written[1]).toMatch(/^\ra\.pdf \[#+\] 100%.*\n$/)
    const piped: string[] = []
    const pipe = { isTTY: false, write: (s: string) => piped.push(s) } as unknown as NodeJS.WriteStream
    uploadProgress(pipe, 'a.pdf')(100, 100)
    expect(piped).toEqual([])
  })
})
