import { createServer, type Server } from 'node:http'
import type Koa from 'koa'
import type { Logger } from 'pino'
import type { GatewayConfig } from './config.js'
import { filesHostHandler } from './files-host.js'
import type { UploadDigests } from './upload-digests.js'

export interface GatewayServers {
  /** Stops accepting connections and resolves when the open ones are done. */
  close(): Promise<void>
}

/**
 * The API server and (DUTIL_FILES_PORT) the files host, listening. A client gets a bounded time
 * to send its request (a body trickled a byte at a time is cut off); the answer itself may take
 * longer (sync runs wait up to DUTIL_SYNC_WAIT_SECONDS). The files host serves downloads with a
 * CSP sandbox whatever storage is behind it (gateway/files-host.ts).
 */
export function listen(config: GatewayConfig, app: Koa, log: Logger, digests?: UploadDigests): GatewayServers {
  const api = createServer(
    {
      requestTimeout: config.timeouts.requestMs,
      headersTimeout: config.timeouts.headersMs,
      keepAliveTimeout: config.timeouts.keepAliveMs,
      connectionsCheckingInterval: 1000,
    },
    app.callback(),
  )
  api.listen(config.port, config.host)
  let files: Server | undefined
  if (config.filesPort) {
    files = createServer(
      { headersTimeout: config.timeouts.headersMs, keepAliveTimeout: config.timeouts.keepAliveMs },
      filesHostHandler({
        storage: config.storage.endpoint,
        publicEndpoint: config.storage.publicEndpoint,
        bucket: config.storage.bucket,
        log,
        digests,
      }),
    )
    files.listen(config.filesPort, config.host)
    log.info(
      { url: `http://${config.host}:${config.filesPort}`, links: config.storage.publicEndpoint },
      'files host listening',
    )
  }
  return {
    close: async () => {
      files?.close()
      const closed = new Promise((resolve) => api.close(resolve))
      // A keep-alive connection whose request is answered during the drain (a sync run told 202)
      // goes idle after close() was called: it is closed then, not when its keep-alive expires.
      const sweep = setInterval(() => api.closeIdleConnections(), 100)
      api.closeIdleConnections()
      await closed
      clearInterval(sweep)
    },
  }
}
