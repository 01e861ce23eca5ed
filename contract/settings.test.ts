import Type from 'typebox'
import { describe, expect, it } from 'vitest'
import { readSettings, Setting, SettingsError } from './settings.js'

const SCHEMA = Type.Object({
  WORKERS: Setting.integer('workers', { default: 8, minimum: 1, maximum: 64 }),
  RATIO: Setting.number('ratio', { default: 1, exclusiveMinimum: 0 }),
  ON: Setting.boolean('on', false),
  MODE: Setting.oneOf('mode', ['fast', 'safe'], 'safe'),
  URL: Setting.url('url'),
  NAME: Setting.optional(Setting.string('name')),
})

const problems = (env: NodeJS.ProcessEnv): string[] => {
  try {
    readSettings(SCHEMA, env)
    return []
  } catch (err) {
    expect(err).toBeInstanceOf(SettingsError)
    return (err as SettingsError).problems
  }
}

describe('settings', () => {
  it('takes defaults for unset and empty variables and converts the rest', () => {
    expect(readSettings(SCHEMA, { URL: 'http://x', WORKERS: '', RATIO: '0.5', ON: 'true' })).toEqual({
      URL: 'http://x',
      WORKERS: 8,
      RATIO: 0.5,
      ON: true,
      MODE: 'safe',
    })
    expect(readSettings(SCHEMA, { URL: 'https://x', WORKERS: ' 12 ', MODE: 'fast', NAME: 'n' })).toMatchObject({
      WORKERS: 12,
      MODE: 'fast',
      NAME: 'n',
    })
  })

  it('names every wrong variable with what it got, instead of a silent zero', () => {
    expect(problems({ URL: 'http://x', WORKERS: 'eight' })).toEqual(['WORKERS must be integer (got "eight")'])
    expect(problems({ URL: 'http://x', WORKERS: '0' })).toEqual(['WORKERS must be >= 1 (got "0")'])
    expect(problems({ URL: 'http://x', WORKERS: '2.5' })).toEqual(['WORKERS must be integer (got "2.5")'])
    expect(problems({ URL: 'http://x', RATIO: '0' })).toEqual(['RATIO must be > 0 (got "0")'])
    expect(problems({ URL: 'http://x', ON: 'yes please' })).toEqual(['ON must be boolean (got "yes please")'])
    expect(problems({ URL: 'http://x', MODE: 'quick' })).toEqual([
      'MODE must be one of the allowed values (got "quick")',
    ])
    expect(problems({})).toEqual(['URL is required'])
    expect(problems({ URL: 'ftp://x', WORKERS: '-1' })).toHaveLength(2)
  })

  it('never echoes a password or a secret in its error', () => {
    const S = Type.Object({
      DB_URL: Setting.url('db', { schemes: ['postgres'] }),
      S3_SECRET_KEY: Setting.string('s', { minLength: 40 }),
    })
    const got = (env: NodeJS.ProcessEnv) => {
      try {
        readSettings(S, env)
        return ''
      } catch (err) {
        return (err as SettingsError).message
      }
    }
    // A mistyped scheme: the URL is shown, its password is not.
    const typo = got({ DB_URL: 'postgress://dutil:hunter2-pass@db:5432/dutil', S3_SECRET_KEY: 'x'.repeat(40) })
    expect(typo).toContain('"postgress://dutil:***@db:5432/dutil"')
    expect(typo).not.toContain('hunter2')
    expect(got({ DB_URL: 'postgres//dutil:hunter2-pass@db/dutil', S3_SECRET_KEY: 'x'.repeat(40) })).not.toContain(
      'hunter2',
    )
    const secret = got({ DB_URL: 'postgres://db/dutil', S3_SECRET_KEY: 'too-short-secret' })
    expect(secret).toBe(
      'invalid settings: S3_SECRET_KEY must NOT have fewer than 40 characters (got a value of 16 characters)',
    )
  })
})
