import { Readable } from 'node:stream'
import type { StorageGrant } from '../../contract/runner-protocol.js'
import { ObjectStoreError, type ObjectStore } from './object-store.js'

const denied = (what: string) => new ObjectStoreError(`${what}: not covered by this runner's storage grant`, 403, 'AccessDenied')

async function check(res: Response, what: string): Promise<Response> {
  if (res.ok) return res
  const text = await res.text().catch(() => '')
  throw new ObjectStoreError(`${what}: ${res.status}`, res.status, /<Code>([^<]*)<\/Code>/.exec(text)?.[1])
}

/**
 * The object store of a runner without credentials: its presigned grant covers reading its
 * input, writing its result manifest and writing single-request outputs under its prefix.
 * Anything else is refused here, and would be refused by storage too.
 */
export function grantedObjectStore(grant: StorageGrant, bucket: string): ObjectStore {
  const unsupported = async (): Promise<never> => {
    throw denied('multipart upload')
  }
  return {
    bucket,
    async getObject(key) {
      if (key !== grant.input.key) throw denied(`GET ${key}`)
      const res = await check(await fetch(grant.input.url), `GET ${key}`)
      const len = Number(res.headers.get('content-length'))
      return { size: Number.isFinite(len) ? len : undefined, body: Readable.fromWeb(res.body as never) }
    },
    async putObject(key, body, contentType) {
      if (key === grant.result.key) {
        await check(await fetch(grant.result.url, { method: 'PUT', body, headers: { 'content-type': contentType } }), `PUT ${key}`)
        return
      }
      if (!key.startsWith(grant.outputs.prefix)) throw denied(`PUT ${key}`)
      const form = new FormData()
      // The policy's fields carry placeholders for key and Content-Type: ours replace them.
      for (const [k, v] of Object.entries(grant.outputs.fields)) if (k !== 'key' && k !== 'Content-Type') form.append(k, v)
      form.append('key', key)
      form.append('Content-Type', contentType)
      form.append('file', new Blob([body], { type: contentType }))
      await check(await fetch(grant.outputs.url, { method: 'POST', body: form }), `POST ${key}`)
    },
    initiateMultipart: unsupported,
    uploadPart: unsupported,
    completeMultipart: unsupported,
    abortMultipart: unsupported,
    // Outputs of a failed run cannot be deleted without credentials; the grant expires soon after.
    async deleteObject() {},
  }
}
