import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import type { CliContext } from './config-file.js'
import { UsageError } from './usage-error.js'

/** The flags kubectl users know, on every command that talks to the cluster (keys, admin, callbacks). */
export interface KubeFlags {
  kubeconfig?: string
  context?: string
  namespace?: string
}

export interface KubeTarget {
  /** Where the credentials came from, for messages. */
  source: string
  load: () => KubeConfig
  namespace: string
}

/**
 * Which cluster and namespace, as kubectl decides it, with the dutil context's defaults between
 * the environment and kubectl's own default: --kubeconfig, else $KUBECONFIG, else the context's
 * kubeconfig, else ~/.kube/config, else the pod's service account inside a cluster. The
 * kubeconfig context: --context, else the dutil context's kube-context, else the file's current
 * one. The namespace: -n, else $DUTIL_NAMESPACE, else the context's, else `dutil`.
 */
export function kubeTarget(flags: KubeFlags, ctx: CliContext | undefined, env = process.env): KubeTarget {
  const home = join(env.HOME || homedir(), '.kube', 'config')
  const file =
    flags.kubeconfig ?? (env.KUBECONFIG || undefined) ?? ctx?.kubeconfig ?? (existsSync(home) ? home : undefined)
  const context = flags.context ?? ctx?.kubeContext
  const namespace = flags.namespace || env.DUTIL_NAMESPACE || ctx?.namespace || 'dutil'
  if (!file && !env.KUBERNETES_SERVICE_HOST)
    throw new UsageError(
      'no kubeconfig: pass --kubeconfig, set KUBECONFIG, or give the context one (dutil config set-context NAME --kubeconfig PATH)',
    )
  return {
    source: file ?? 'in-cluster',
    namespace,
    load: () => {
      const kc = new KubeConfig()
      if (!file) kc.loadFromCluster()
      else if (file === env.KUBECONFIG && !flags.kubeconfig)
        kc.loadFromDefault() // a KUBECONFIG list (a:b) merged, as kubectl does
      else {
        if (!existsSync(file)) throw new UsageError(`kubeconfig ${file} does not exist`)
        kc.loadFromFile(file)
      }
      if (context) {
        if (!kc.getContexts().some((c) => c.name === context))
          throw new UsageError(`context ${JSON.stringify(context)} is not in ${file ?? 'the in-cluster config'}`)
        kc.setCurrentContext(context)
      }
      return kc
    },
  }
}
