import type { Context } from 'koa'

/** What a sync run waits under: aborted when the gateway shuts down or the client hangs up. */
export interface SyncWait {
  signal: AbortSignal
  /** Whether the client hung up before its answer was sent. */
  clientGone(): boolean
  /** Drops the listeners (the shutdown signal lives as long as the process). */
  dispose(): void
}

/**
 * The response's `close` comes either way; only one before the answer finished means the client
 * has gone (a sync caller that gave up), whether it came while the run waited or before.
 */
export function syncWait(ctx: Context, shutdown: AbortSignal): SyncWait {
  const ctl = new AbortController()
  let gone = false
  const onClose = () => {
    if (ctx.res.writableFinished) return
    gone = true
    ctl.abort()
  }
  const onShutdown = () => ctl.abort()
  if (shutdown.aborted) ctl.abort()
  else shutdown.addEventListener('abort', onShutdown, { once: true })
  ctx.res.once('close', onClose)
  // A client that hung up while its run was being accepted (a busy gateway can take seconds) has
  // already closed the response: its close came before anyone listened.
  if (ctx.res.destroyed) onClose()
  return {
    signal: ctl.signal,
    clientGone: () => gone,
    dispose: () => {
      shutdown.removeEventListener('abort', onShutdown)
      ctx.res.off('close', onClose)
    },
  }
}
