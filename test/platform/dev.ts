import { join } from 'node:path'
import { configPath, readConfig, setContext, useContext, writeConfig } from '../../cli/config-file.js'
import { DEV_PORTS, REPO_ROOT, reportUnexpectedExit, startPlatform, writeKubectl } from './platform.js'
import { serveSamples } from './samples.js'
import { DEV_RESTART_POLICY, Supervisor } from './supervisor.js'

/**
 * `make dev`: the whole platform in the foreground, state kept in .dev/ between runs.
 * Ctrl-C (SIGINT) or SIGTERM stops every process it started.
 */
const say = (m: string) => process.stdout.write(`[dev] ${m}\n`)
const started = Date.now()
const dir = join(REPO_ROOT, '.dev')
// Signals are handled from the first moment: Ctrl-C during start-up stops what has started.
// A process that dies on its own (the operator after losing its lease, a crash) is started
// again with back-off, as a Deployment would restart its pod.
const supervisor = new Supervisor({ restart: DEV_RESTART_POLICY, onUnexpectedExit: reportUnexpectedExit(dir) })
let stopping = false
const stop = async (signal: string) => {
  if (stopping) return
  stopping = true
  say(`${signal}: stopping every process`)
  await supervisor.stopAll()
  say('stopped')
  process.exit(0)
}
process.on('SIGINT', () => void stop('SIGINT'))
process.on('SIGTERM', () => void stop('SIGTERM'))
process.on('SIGHUP', () => void stop('SIGHUP'))
process.on('exit', () => supervisor.killAllNow())

const platform = await startPlatform({
  tracing: true,
  supervisor,
  dir,
  ports: DEV_PORTS,
  fresh: false,
  allowLoopbackUrls: true,
  testHooks: false,
  progress: say,
})
say(
  `allowLoopbackUrls=true: input URLs on 127.0.0.1 may be fetched and callbacks may go to https://localhost (dev only; off by default everywhere else)`,
)
// The walkthrough's inputs on a loopback URL (make dev allows loopback input URLs), and a
// kubectl for this cluster, so the README's commands work as pasted.
const samples = await serveSamples().catch((err: Error) => {
  say(`sample files not served: ${err.message}`)
  return null
})
writeKubectl(join(dir, 'bin', 'kubectl'), join(dir, 'kubeconfig'))
say(`platform up in ${((Date.now() - started) / 1000).toFixed(1)} s; logs in .dev/logs/`)
// The CLI's `dev` context: this gateway and this cluster (as `kind` adds its cluster to the
// kubeconfig), current unless another context is; an API key stored in it earlier stays.
const cliConfig = configPath()
let cli = setContext(readConfig(cliConfig), 'dev', {
  url: platform.gatewayUrl,
  kubeconfig: join(dir, 'kubeconfig'),
  namespace: 'dutil',
})
if (!cli.currentContext) cli = useContext(cli, 'dev')
writeConfig(cliConfig, cli)
say(`CLI context dev in ${cliConfig}${cli.currentContext === 'dev' ? ' (current)' : ''}`)
process.stdout.write(`
  dutil gateway:  ${platform.gatewayUrl}
  console:        ${platform.gatewayUrl}/console/   (first admin: npx dutil admin create --email you@example.com)
  traces:         ${platform.tracesUrl ?? 'off'}   (Jaeger's query API: /api/traces/<trace id>; docs/observability.md)
  kubeconfig:     .dev/kubeconfig   (kubectl for it: .dev/bin/kubectl get utilityjobs)
  sample files:   ${samples ? samples.names.map((n) => `${samples.url}/${n}`).join(' ') : 'not served'}
  create a key:   npx dutil keys create --name laptop
  use it:         npx dutil config set-context dev --api-key du_live_...

  Press Ctrl-C to stop.
`)
