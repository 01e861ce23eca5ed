// Prints the plain closing line CI reads ("N passed, N failed, N skipped") from vitest's JSON report.
import { readFileSync } from 'node:fs'

const file = process.argv[2]
try {
  const r = JSON.parse(readFileSync(file, 'utf8'))
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0)
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`)
} catch (err) {
  console.log(`tests: no report at ${file} (${err.message})`)
}
