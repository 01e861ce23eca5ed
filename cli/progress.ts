/** A progress bar on a terminal: `name [#####.....]  42%  120.0 of 286.1 MB`. */
export function progressLine(name: string, sent: number, total: number, width = 24): string {
  const share = total > 0 ? Math.min(1, sent / total) : 1
  const filled = Math.round(share * width)
  const mb = (n: number) => (n / 1024 ** 2).toFixed(1)
  return `${name} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(share * 100)).padStart(3)}%  ${mb(sent)} of ${mb(total)} MB`
}

/**
 * What an upload's progress does on stderr: on a terminal, a bar redrawn in place (at most every
 * 100 ms, and at the end, which ends its line); elsewhere (a pipe, a log) nothing, so scripts
 * read only the one line that says the file was uploaded.
 */
export function uploadProgress(
  err: NodeJS.WriteStream,
  name: string,
  now: () => number = Date.now,
): (sent: number, total: number | undefined) => void {
  if (!err.isTTY) return () => {}
  let last = 0
  return (sent, total) => {
    if (total === undefined) return
    const done = sent >= total
    if (!done && now() - last < 100) return
    last = now()
    err.write(`\r${progressLine(name, sent, total)}${done ? '\n' : ''}`)
  }
}
