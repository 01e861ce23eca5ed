#!/usr/bin/env node
// The docs stand alone (make lint): every Markdown link in README.md, docs/ and the chart and
// client READMEs points at a file of this repository that exists (and a heading of it, for
// `#anchor` links); never at a path or an address outside the repository.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(dirname(new URL(import.meta.url).pathname), '..')
const files = [
  'README.md',
  'clients/typescript/README.md',
  'clients/python/README.md',
  'cli/README.md',
  'charts/dutil/README.md',
  ...walk('docs'),
].filter((f) => existsSync(join(root, f)))

function walk(dir) {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name)
    return statSync(join(root, path)).isDirectory() ? walk(path) : path.endsWith('.md') ? [path] : []
  })
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
const anchorOf = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')

const problems = []
for (const file of files) {
  const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '')
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^mailto:/.test(target)) continue
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      problems.push(`${file}: ${target} points outside the repository`)
      continue
    }
    const [path, anchor] = target.split('#')
    const resolved = path ? resolve(dirname(join(root, file)), decodeURIComponent(path)) : join(root, file)
    const where = relative(root, resolved)
    if (where.startsWith('..')) problems.push(`${file}: ${target} points outside the repository`)
    else if (!existsSync(resolved)) problems.push(`${file}: ${target} does not exist`)
    else if (anchor && resolved.endsWith('.md')) {
      const headings = [...readFileSync(resolved, 'utf8').matchAll(/^#+\s+(.*)$/gm)].map((m) => anchorOf(m[1]))
      if (!headings.includes(anchor)) problems.push(`${file}: ${target} names no heading of ${where}`)
    }
  }
}
if (problems.length) {
  process.stderr.write(`doc links:\n${problems.map((p) => `  ${p}`).join('\n')}\n`)
  process.exit(1)
}
