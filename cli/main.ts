import { readFileSync } from 'node:fs'
import { CommanderError } from 'commander'
import { DutilConnectionError, DutilRequestError } from '../clients/typescript/src/index.js'
import { EXIT } from './api-commands.js'
import { ConfigError } from './config-file.js'
import { buildProgram } from './program.js'
import { UsageError } from './usage-error.js'

/** The dutil command line: cli/program.ts is the command tree; this wires it and maps failures to exit codes. */
declare const __DUTIL_VERSION__: string | undefined

function version(): string {
  // The bundle (cli/bundle.ts) has it built in; a checkout reads the repository's package.json.
  if (typeof __DUTIL_VERSION__ === 'string') return __DUTIL_VERSION__
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version
}

function failure(err: unknown): number {
  if (err instanceof CommanderError)
    return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0
      ? EXIT.ok
      : EXIT.usage
  if (err instanceof UsageError || err instanceof ConfigError) {
    console.error(err.message)
    return EXIT.usage
  }
  if (err instanceof DutilRequestError) {
    const details = err.details.map((d) => `\n  ${d.path}: ${d.message}`).join('')
    const retry = err.retryAfter !== null ? `\n  try again in ${err.retryAfter} s` : ''
    console.error(`dutil: refused (${err.status} ${err.code}): ${err.message}${details}${retry}`)
    return EXIT.refused
  }
  if (err instanceof DutilConnectionError) {
    console.error(`dutil: ${err.message}`)
    return EXIT.unreachable
  }
  console.error(`dutil: ${err instanceof Error ? err.message : String(err)}`)
  return 1
}

const program = buildProgram(version(), { out: (text) => console.log(text) }, (code) => (process.exitCode = code))
program.parseAsync(process.argv.slice(2), { from: 'user' }).catch((err: unknown) => {
  process.exitCode = failure(err)
})
