// Prints the plain closing line CI reads ("N passed, N failed, N skipped") from vitest's JSON
// reports (one per project run), summed; a missing report counts as a failure.
import { readFileSync } from 'node:fs'

let passed = 0
let failed = 0
let skipped = 0
const missing = []
for (const file of process.argv.slice(2)) {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8'))
    passed += r.numPassedTests ?? 0
    failed += r.numFailedTests ?? 0
    skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0)
    // A suite that failed to load (a syntax error, a failed beforeAll) has no failed tests of its own.
    failed += (r.testResults ?? []).filter((t) => t.status === 'failed' && (t.assertionResults ?? []).every((a) => a.status !== 'failed')).length
  } catch (err) {
    missing.push(`${file} (${err.code ?? err.message})`)
  }
}
if (missing.length) console.log(`no report at ${missing.join(', ')}`)
console.log(`tests: ${passed} passed, ${failed + missing.length} failed, ${skipped} skipped`)
