#!/usr/bin/env node
// The dutil command line (`npx dutil ...`). Runs the compiled CLI; `make build` produces it.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const main = new URL('../dist/cli/main.js', import.meta.url)
if (!existsSync(fileURLToPath(main))) {
  console.error('dutil: not built yet; run `make build` (or `make dev`) in the repository first')
  process.exit(1)
}
await import(main.href)
