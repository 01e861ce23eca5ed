import { describe, expect, it } from 'vitest'
import { s3Encode, signV4 } from './object-store.js'

// The examples of AWS's "Signature Version 4: authenticating requests (AWS signature in the
// Authorization header)" documentation for Amazon S3.
const example = {
  host: 'examplebucket.s3.amazonaws.com',
  payloadHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  region: 'us-east-1',
  accessKey: 'AKIAIOSFODNN7EXAMPLE',
  secretKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  now: new Date('2013-05-24T00:00:00Z'),
}

describe('signV4', () => {
  it('matches the documented GET Bucket Lifecycle example', () => {
    const h = signV4({ ...example, method: 'GET', path: '/', query: { lifecycle: '' } })
    expect(h['x-amz-date']).toBe('20130524T000000Z')
    expect(h.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543',
    )
  })

  it('matches the documented Get Bucket (List Objects) example, query sorted', () => {
    const h = signV4({ ...example, method: 'GET', path: '/', query: { prefix: 'J', 'max-keys': '2' } })
    expect(h.authorization).toContain('Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7')
  })
})

describe('s3Encode', () => {
  it('encodes as RFC 3986, keeping slashes in paths', () => {
    expect(s3Encode("a b/c(1)!*'.pdf", true)).toBe('a%20b/c%281%29%21%2A%27.pdf')
    expect(s3Encode('a/b')).toBe('a%2Fb')
    expect(s3Encode('ünï~_-.')).toBe('%C3%BCn%C3%AF~_-.')
  })
})
