import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  activeContext,
  apiSettings,
  ConfigError,
  configPath,
  deleteContext,
  readConfig,
  redacted,
  setContext,
  useContext,
  writeConfig,
} from './config-file.js'
import { fileScratch } from '../test/support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratchRoot = fileScratch('dutil-test-config-file-')

const KEY = 'du_live_0123456789abcdef0123456789abcdef0123456789abcdef'

describe('the CLI config file', () => {
  it('lives at DUTIL_CONFIG, else under XDG_CONFIG_HOME, else ~/.config', () => {
    expect(configPath({ DUTIL_CONFIG: '/x/c.yaml', XDG_CONFIG_HOME: '/y' })).toBe('/x/c.yaml')
    expect(configPath({ XDG_CONFIG_HOME: '/y' })).toBe('/y/dutil/config.yaml')
    expect(configPath({ HOME: '/home/a' })).toBe('/home/a/.config/dutil/config.yaml')
  })

  it('round-trips contexts through a 0600 file in a 0700 folder, kubeconfig-style keys', () => {
    const path = join(mkdtempSync(join(scratchRoot, 'dutil-cfg-')), 'dutil', 'config.yaml')
    let c = setContext({ contexts: [] }, 'prod', { url: 'https://d.example.com', apiKey: KEY, namespace: 'docs' })
    c = useContext(setContext(c, 'dev', { url: 'http://127.0.0.1:8080', kubeContext: 'kind-dev' }), 'prod')
    writeConfig(path, c)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700)
    const text = readFileSync(path, 'utf8')
    expect(text).toContain('current-context: prod')
    expect(text).toContain('api-key: du_live_')
    expect(text).toContain('kube-context: kind-dev')
    expect(readConfig(path)).toEqual(c)
  })

  it('changes only the fields given; an empty value removes one; the name and URL are checked', () => {
    const c = setContext({ contexts: [] }, 'a', { url: 'http://x', apiKey: KEY })
    expect(setContext(c, 'a', { namespace: 'n' }).contexts).toEqual([
      { name: 'a', url: 'http://x', apiKey: KEY, namespace: 'n' },
    ])
    expect(setContext(c, 'a', { apiKey: '' }).contexts).toEqual([{ name: 'a', url: 'http://x' }])
    expect(() => setContext(c, 'bad name', {})).toThrow(ConfigError)
    expect(() => setContext(c, 'b', { url: 'ftp://x' })).toThrow(/http:\/\/ or https:\/\//)
    expect(() => setContext(c, 'b', { url: 'not a url' })).toThrow(/not a URL/)
    expect(() => useContext(c, 'zz')).toThrow(/no context "zz" \(known: a\)/)
    expect(deleteContext(useContext(c, 'a'), 'a')).toEqual({ contexts: [] })
  })

  it('picks the context: DUTIL_CONTEXT, else the current one; the environment beats it for the API', () => {
    const c = useContext(
      setContext(setContext({ contexts: [] }, 'a', { url: 'http://a', apiKey: KEY }), 'b', { url: 'http://b' }),
      'a',
    )
    expect(activeContext(c, {})?.name).toBe('a')
    expect(activeContext(c, { DUTIL_CONTEXT: 'b' })?.name).toBe('b')
    expect(() => activeContext(c, { DUTIL_CONTEXT: 'c' })).toThrow(/"c" \(DUTIL_CONTEXT\) is not in the config file/)
    expect(apiSettings(activeContext(c, {}), {})).toEqual({ url: 'http://a', apiKey: KEY })
    expect(apiSettings(activeContext(c, {}), { DUTIL_URL: 'http://env', DUTIL_API_KEY: 'k' })).toEqual({
      url: 'http://env',
      apiKey: 'k',
    })
    expect(apiSettings(undefined, {})).toEqual({ url: 'http://127.0.0.1:8080', apiKey: undefined })
    expect(redacted(c.contexts[0]).apiKey).toBe('du_live_01234567…')
  })

  it('names the file and the problem when it is malformed, and reads no YAML aliases', () => {
    const dir = mkdtempSync(join(scratchRoot, 'dutil-cfg-'))
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text)
      return join(dir, name)
    }
    expect(readConfig(join(dir, 'none.yaml'))).toEqual({ contexts: [] })
    expect(() => readConfig(write('a.yaml', 'contexts: [{'))).toThrow(/a\.yaml is not valid YAML/)
    expect(() => readConfig(write('b.yaml', 'contexts: {a: 1}'))).toThrow(/b\.yaml: contexts must be a list/)
    expect(() => readConfig(write('c.yaml', 'contexts:\n  - name: x\n    url: 3\n'))).toThrow(
      /contexts\[0\]\.url must be a string/,
    )
    expect(() => readConfig(write('d.yaml', 'a: &a [1]\nb: *a\n'))).toThrow(ConfigError)
  })
})
