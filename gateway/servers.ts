import { createServer, type Server } from 'node:http'
import type Koa from 'koa'
import type { Logger } from 'pino'
import type { GatewayConfig } from './config.js'
import { ConnectionDrain } from './connection-drain.js'
import { filesHostHandler } from './files-host.js'
import type { UploadDigests } from './upload-digests.js'

export interface GatewayServers {
  /** Lets every connection go after its next answer (ConnectionDrain), then stops listening. */
  close(): Promise<void>
}

/** How long a keep-alive connection may stay idle at shutdown before it is closed (ConnectionDrain). */
const IDLE_DRAIN_MS = 2000

/**
 * The API server and (DUTIL_FILES_PORT) the files host, listening. A client gets a bounded time
 * to send its request (a body trickled a byte at a time is cut off); the answer itself may take
 * longer (sync runs wait up to DUTIL_SYNC_WAIT_SECONDS). The files host serves downloads with a
 * CSP sandbox whatever storage is behind it (gateway/files-host.ts).
 */
export function listen(config: GatewayConfig, app: Koa, log: Logger, digests?: UploadDigests): GatewayServers {
  const drain = new ConnectionDrain(IDLE_DRAIN_MS)
  const api = createServer(
    {
      requestTimeout: config.timeouts.requestMs,
      headersTimeout: config.timeouts.headersMs,
      keepAliveTimeout: config.timeouts.keepAliveMs,
      connectionsCheckingInterval: 1000,
    },
    drain.wrap(app.callback()),
  )
  api.listen(config.port, config.host)
  let files: Server | undefined
  if (config.filesPort) {
    files = createServer(
      { headersTimeout: config.timeouts.headersMs, keepAliveTimeout: config.timeouts.keepAliveMs },
      drain.wrap(
        filesHostHandler({
          storage: config.storage.endpoint,
          publicEndpoint: config.storage.publicEndpoint,
          bucket: config.storage.bucket,
          log,
          digests,
        }),
      ),
    )
    files.listen(config.filesPort, config.host)
    log.info(
      { url: `http://${config.host}:${config.filesPort}`, links: config.storage.publicEndpoint },
      'files host listening',
    )
  }
  return { close: () => drain.drain(files ? [api, files] : [api]) }
}
