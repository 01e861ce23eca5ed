/**
 * The first-key command the chart's NOTES.txt prints (a `kubectl … run dutil-keys` that may span
 * lines joined by backslashes), as one line, exactly as a person would copy it.
 */
export function firstKeyCommand(notes: string): string {
  const lines = notes.split('\n')
  const first = lines.findIndex((l) => /kubectl -n \S+ run dutil-keys/.test(l))
  if (first < 0) throw new Error('the NOTES print no `kubectl run dutil-keys` command')
  let last = first
  while (lines[last].trimEnd().endsWith('\\')) last++
  return lines
    .slice(first, last + 1)
    .map((l) => l.trim().replace(/\\$/, ''))
    .join(' ')
}
