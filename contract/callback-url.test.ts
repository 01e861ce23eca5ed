import { describe, expect, it } from 'vitest'
import { callbackUrlProblem } from './callback-url.js'

describe('callbackUrlProblem', () => {
  it.each([
    'https://hooks.example.com/dutil',
    'https://hooks.example.com:8443/a/b?c=d#e',
    'https://localhost:9443/hook', // a name: resolved and checked before every attempt
    'https://93.184.216.34/hook',
    'https://[2606:4700::1111]/hook',
  ])('accepts %s', (url) => {
    expect(callbackUrlProblem(url)).toBeNull()
  })

  it.each([
    ['http://hooks.example.com/', 'https'],
    ['ftp://hooks.example.com/', 'https'],
    ['not a url', 'valid URL'],
    ['https://user:pass@hooks.example.com/', 'credentials'],
    ['https://user@hooks.example.com/', 'credentials'],
    ['https://169.254.169.254/latest/meta-data/', 'private'],
    ['https://10.0.0.1/', 'private'],
    ['https://172.16.5.4/', 'private'],
    ['https://192.168.1.1/', 'private'],
    ['https://100.64.0.1/', 'private'],
    ['https://127.0.0.1:8443/', 'loopback'],
    ['https://0x7f.1/', 'loopback'], // the URL parser reads hex and short forms as 127.0.0.1
    ['https://2852039166/', 'private'], // 169.254.169.254 written as one integer
    ['https://224.0.0.1/', 'multicast'],
    ['https://[::1]/', 'loopback'],
    ['https://[fd00:ec2::254]/', 'unique-local'],
    ['https://[fe80::1]/', 'link-local'],
    ['https://[::ffff:169.254.169.254]/', 'private'],
    ['https://[::ffff:a00:1]/', 'private'],
  ])('refuses %s', (url, why) => {
    expect(callbackUrlProblem(url)).toContain(why)
  })

  it('refuses a URL longer than 2048 characters', () => {
    const url = `https://hooks.example.com/${'a'.repeat(2048)}`
    expect(callbackUrlProblem(url)).toContain('2048')
    expect(callbackUrlProblem(url.slice(0, 2048))).toBeNull()
  })
})
