// Prints the plain closing line CI reads ("N passed, N failed, N skipped") from vitest's JSON
// reports (one per project run), summed, after naming each failed test; a missing report counts as a failure.
import { readFileSync } from 'node:fs'

let passed = 0
let failed = 0
let skipped = 0
const missing = []
const failures = []
for (const file of process.argv.slice(2)) {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8'))
    passed += r.numPassedTests ?? 0
    failed += r.numFailedTests ?? 0
    skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0)
    // A suite that failed to load (a syntax error, a failed beforeAll) has no failed tests of its own.
    for (const suite of r.testResults ?? []) {
      for (const a of suite.assertionResults ?? []) {
        if (a.status === 'failed')
          failures.push({ file: suite.name, title: a.fullName ?? a.title, message: a.failureMessages?.[0] ?? '' })
      }
      if (suite.status === 'failed' && (suite.assertionResults ?? []).every((a) => a.status !== 'failed')) {
        failures.push({ file: suite.name, title: '(the file failed to run)', message: suite.message ?? '' })
      }
    }
    failed += (r.testResults ?? []).filter(
      (t) => t.status === 'failed' && (t.assertionResults ?? []).every((a) => a.status !== 'failed'),
    ).length
    // A run that failed outside any file (its global setup threw, say) writes a report with no
    // failed test and success false: one failure, named after the report.
    if (r.success === false && r.numFailedTests === 0 && !(r.testResults ?? []).some((t) => t.status === 'failed')) {
      failures.push({
        file,
        title: '(the run failed outside its tests: global setup or teardown; its log above says why)',
        message: '',
      })
      failed += 1
    }
  } catch (err) {
    missing.push(`${file} (${err.code ?? err.message})`)
  }
}
// CI keeps only the end of the output: name each failure here, with the first lines of its cause.
const strip = (text) => text.replace(/\x1b\[[0-9;]*m/g, '')
for (const f of failures) {
  console.log(`FAILED ${f.file.replace(process.cwd() + '/', '')} > ${f.title}`)
  for (const line of strip(f.message)
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, 6))
    console.log(`    ${line.slice(0, 200)}`)
}
if (missing.length) console.log(`no report at ${missing.join(', ')}`)
// A failed real-node set-up says why in a few lines (test/node/global-setup.ts writes them).
try {
  const why = readFileSync('.test-results.node-setup-failure.txt', 'utf8').trimEnd().split('\n').slice(0, 20)
  console.log('the real-node set-up failed:')
  for (const line of why) console.log(`    ${line.slice(0, 240)}`)
} catch {
  // It did not fail.
}
// The real-node tier says why it skipped (test/node/global-setup.ts writes the reason).
try {
  console.log(`SKIPPED the real-node tests: ${readFileSync('.test-results.node-skipped.txt', 'utf8').trim()}`)
} catch {
  // It ran (or was not asked for).
}
console.log(`tests: ${passed} passed, ${failed + missing.length} failed, ${skipped} skipped`)
