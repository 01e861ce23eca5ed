import { createHash } from 'node:crypto'
import { createReadStream, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'

/** A registry reached over plain http with basic auth (distribution's, run by a test). */
export interface RegistryAccess {
  address: string
  user: string
  password: string
}

interface Descriptor {
  mediaType: string
  digest: string
  size: number
  platform?: { os: string; architecture: string }
}

interface Manifest {
  mediaType?: string
  config: Descriptor
  layers: Descriptor[]
}

/**
 * Pushes an image of containerd's store to a registry through the registry's HTTP API, with
 * labels added to its config, so the copy has an image id of its own (its config's digest) while
 * its layers are the same blobs. Blobs are read straight from the store's content directory and
 * sent as they are stored; a layer the registry already has is not sent again. Returns the
 * copy's image id.
 */
export async function pushWithLabels(o: {
  /** containerd's content store: `<root>/io.containerd.content.v1.content`. */
  contentDir: string
  /** The image's target (manifest or index) as `ctr images ls` shows it. */
  target: { mediaType: string; digest: string }
  registry: RegistryAccess
  repository: string
  tag: string
  labels: Record<string, string>
}): Promise<string> {
  const blobPath = (digest: string) => join(o.contentDir, 'blobs', ...digest.split(':'))
  const readJson = <T>(digest: string) => JSON.parse(readFileSync(blobPath(digest), 'utf8')) as T
  let manifestDescriptor: Descriptor = { ...o.target, size: statSync(blobPath(o.target.digest)).size }
  if (/index|manifest\.list/.test(o.target.mediaType)) {
    const index = readJson<{ manifests: Descriptor[] }>(o.target.digest)
    const amd64 = index.manifests.find((m) => m.platform?.os === 'linux' && m.platform.architecture === 'amd64')
    if (!amd64) throw new Error(`${o.target.digest}: no linux/amd64 manifest in the index`)
    manifestDescriptor = amd64
  }
  const manifest = readJson<Manifest>(manifestDescriptor.digest)
  const config = readJson<{ config?: { Labels?: Record<string, string> | null } }>(manifest.config.digest)
  config.config = { ...config.config, Labels: { ...(config.config?.Labels ?? {}), ...o.labels } }
  const configBytes = Buffer.from(JSON.stringify(config))
  const configDigest = `sha256:${createHash('sha256').update(configBytes).digest('hex')}`

  const api = new RegistryApi(o.registry, o.repository)
  for (const layer of manifest.layers)
    if (!(await api.hasBlob(layer.digest)))
      await api.putBlob(layer.digest, layer.size, () => createReadStream(blobPath(layer.digest)))
  await api.putBlob(configDigest, configBytes.length, () => Readable.from([configBytes]))
  const copy: Manifest = { ...manifest, config: { ...manifest.config, digest: configDigest, size: configBytes.length } }
  await api.putManifest(o.tag, manifestDescriptor.mediaType, Buffer.from(JSON.stringify(copy)))
  return configDigest
}

class RegistryApi {
  private readonly base: string
  private readonly auth: string

  constructor(r: RegistryAccess, repository: string) {
    this.base = `http://${r.address}/v2/${repository}`
    this.auth = `Basic ${Buffer.from(`${r.user}:${r.password}`).toString('base64')}`
  }

  async hasBlob(digest: string): Promise<boolean> {
    const res = await fetch(`${this.base}/blobs/${digest}`, { method: 'HEAD', headers: { authorization: this.auth } })
    if (res.status !== 200 && res.status !== 404) throw new Error(`HEAD blob ${digest}: ${res.status}`)
    return res.status === 200
  }

  /** A monolithic upload: POST for a session, PUT of the whole blob with its digest. */
  async putBlob(digest: string, size: number, body: () => Readable): Promise<void> {
    const started = await fetch(`${this.base}/blobs/uploads/`, {
      method: 'POST',
      headers: { authorization: this.auth },
    })
    const location = started.headers.get('location')
    if (started.status !== 202 || !location) throw new Error(`starting an upload: ${started.status}`)
    const url = new URL(location, this.base)
    url.searchParams.set('digest', digest)
    const res = await fetch(url, {
      method: 'PUT',
      headers: {
        authorization: this.auth,
        'content-type': 'application/octet-stream',
        'content-length': String(size),
      },
      body: Readable.toWeb(body()) as ReadableStream,
      duplex: 'half',
    } as RequestInit)
    if (res.status !== 201) throw new Error(`uploading ${digest}: ${res.status} ${await res.text()}`)
  }

  async putManifest(tag: string, mediaType: string, bytes: Buffer): Promise<void> {
    const res = await fetch(`${this.base}/manifests/${tag}`, {
      method: 'PUT',
      headers: { authorization: this.auth, 'content-type': mediaType },
      body: bytes,
    })
    if (res.status !== 201) throw new Error(`putting the manifest ${tag}: ${res.status} ${await res.text()}`)
  }
}
