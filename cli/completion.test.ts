import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { complete, completionScript } from './completion.js'
import { buildProgram } from './program.js'

const program = buildProgram('0.0.0', { out: () => undefined }, () => undefined)
const contexts = () => ['dev', 'prod']
const values = (name: string) => (name === 'name' ? contexts() : [])
const at = (...words: string[]) => complete(program, words, values)

describe('shell completion', () => {
  it('completes commands, subcommands and their flags (with the inherited ones)', () => {
    expect(at('')).toEqual(['run', 'jobs', 'files', 'keys', 'admin', 'callbacks', 'config', 'completion'])
    expect(at('files', '')).toEqual(['upload', 'list', 'delete'])
    expect(at('jobs', 'l')).toEqual(['list'])
    expect(at('keys', 'r')).toEqual(['revoke', 'rotate-secret', 'reveal-secret'])
    expect(at('jobs', 'list', '--st')).toEqual(['--status'])
    expect(at('keys', 'list', '--k')).toEqual(['--kubeconfig'])
    expect(at('keys', 'list', '--')).toContain('--namespace')
    expect(at('keys', 'list', '--')).not.toContain('--json')
  })

  it('completes values: utilities, job states, output formats, shells, context names', () => {
    expect(at('run', '')).toEqual([
      'html-pdf',
      'html-image',
      'office-pdf',
      'split-pdf',
      'merge-pdf',
      'edit-pdf',
      'pdf-info',
      'zip-files',
      'unzip-files',
      'xls-to-xlsx',
    ])
    expect(at('run', 's')).toEqual(['split-pdf'])
    expect(at('run', 'html-')).toEqual(['html-pdf', 'html-image'])
    expect(at('jobs', 'list', '--status', 'fa')).toEqual(['failed'])
    expect(at('jobs', 'list', '-o', '')).toEqual(['table', 'wide', 'json', 'yaml'])
    expect(at('jobs', 'list', '--utility', 'x')).toEqual(['xls-to-xlsx'])
    expect(at('completion', '')).toEqual(['bash', 'zsh', 'fish'])
    expect(at('config', 'use-context', '')).toEqual(['dev', 'prod'])
    // After a flag that takes a value and its value, the command's own words again.
    expect(at('run', '--metadata', '{}', 'z')).toEqual(['zip-files'])
  })

  it('writes scripts that ask `dutil __complete` and parse in their shell', () => {
    for (const shell of ['bash', 'zsh', 'fish'] as const) expect(completionScript(shell)).toContain('dutil __complete')
    // bash parses the script it is given (the shell users source it in).
    execFileSync('bash', ['-n', '-c', completionScript('bash')])
  })
})
