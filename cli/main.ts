import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node'
import { EXPIRY_DAYS } from '../contract/api-keys.js'
import { CONTRACT_SLUGS } from '../contract/utility.js'
import { apiStatus } from '../platform/kube.js'
import { ApiKeyAdmin, RevokedKeyError, type RevealedSecret } from '../platform/api-key-admin.js'
import { adminCommand, ADMIN_USAGE } from './console-admin.js'
import { redeliveryProblem, requestRedelivery } from '../platform/callback-redelivery.js'
import { API_GROUP, API_VERSION, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { objectNameOf, ulidOf } from '../contract/ids.js'
import { apiCommand, API_USAGE } from './api-commands.js'

const USAGE = `usage: dutil run|jobs|keys|admin|callbacks <command> [options]

${API_USAGE}

  keys create --name NAME [--utilities a,b] [--rate-limit N] [--expires-in-days 30|90|365] [--json]
  keys list [--json]
  keys revoke KEY_ID
  keys rotate-secret KEY_ID [--json]   new callback signing secret; used from the next attempt on
  keys reveal-secret KEY_ID [--json]   the secret this key's callbacks are signed with

${ADMIN_USAGE}

  callbacks redeliver JOB_ID            sends a finished job's callback again (same webhook-id)

keys and admin use KUBECONFIG, else the pod's service account inside a cluster, else .dev/kubeconfig; namespace from DUTIL_NAMESPACE (default dutil); --rate-limit defaults to
DUTIL_DEFAULT_RATE_LIMIT, else 600.`

class UsageError extends Error {}

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig()
  if (process.env.KUBECONFIG) kc.loadFromDefault()
  // In a pod (the chart's NOTES run the CLI under its key-admin service account).
  else if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster()
  else if (existsSync(join(process.cwd(), '.dev', 'kubeconfig')))
    kc.loadFromFile(join(process.cwd(), '.dev', 'kubeconfig'))
  else throw new UsageError('no kubeconfig: set KUBECONFIG or run `make dev` in this directory first')
  return kc
}

function parseUtilities(raw: string | undefined): string[] {
  if (!raw) return []
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const unknown = list.filter((s) => !(CONTRACT_SLUGS as readonly string[]).includes(s))
  if (unknown.length)
    throw new UsageError(`unknown utilities: ${unknown.join(', ')} (known: ${CONTRACT_SLUGS.join(', ')})`)
  return [...new Set(list)]
}

function parsePositiveInt(raw: string | undefined, what: string): number | undefined {
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new UsageError(`${what} must be a positive whole number`)
  return Number(raw)
}

async function main(argv: string[]): Promise<void> {
  const [group, command, ...rest] = argv
  if (group === '--help' || group === '-h' || group === 'help') return void console.log(USAGE)
  if (group === 'admin') return adminCommand(command, rest, kubeConfig, (m) => new UsageError(m))
  if (group === 'callbacks') return redeliverCommand(command, rest)
  if (group === 'run' || group === 'jobs') {
    process.exitCode = await apiCommand(group, argv.slice(1))
    return
  }
  if (group !== 'keys' || !command) throw new UsageError(USAGE)
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      utilities: { type: 'string' },
      'rate-limit': { type: 'string' },
      'expires-in-days': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  })
  const admin = new ApiKeyAdmin(kubeConfig(), process.env.DUTIL_NAMESPACE || 'dutil')
  switch (command) {
    case 'create': {
      if (!values.name) throw new UsageError('keys create needs --name (where the key runs, e.g. --name laptop)')
      const expires = parsePositiveInt(values['expires-in-days'], '--expires-in-days')
      if (expires !== undefined && !(EXPIRY_DAYS as readonly number[]).includes(expires))
        throw new UsageError('--expires-in-days must be 30, 90 or 365 (omit it for a key that never expires)')
      const created = await admin.create({
        name: values.name,
        utilities: parseUtilities(values.utilities),
        rateLimitPerMinute:
          parsePositiveInt(values['rate-limit'], '--rate-limit') ??
          parsePositiveInt(process.env.DUTIL_DEFAULT_RATE_LIMIT, 'DUTIL_DEFAULT_RATE_LIMIT'),
        expiresInDays: expires,
      })
      if (values.json) console.log(JSON.stringify(created))
      else
        console.log(
          `API key ${created.id} created. It is shown only this once:\n\n  key:            ${created.key}\n  signing secret: ${created.signingSecret}\n`,
        )
      return
    }
    case 'list': {
      const keys = await admin.list()
      if (values.json)
        return void console.log(JSON.stringify(keys.map((k) => ({ id: k.spec.keyId, ...k.spec, hash: undefined }))))
      console.log(['ID', 'NAME', 'PREFIX', 'UTILITIES', 'RATE/MIN', 'EXPIRES', 'REVOKED'].join('\t'))
      for (const k of keys)
        console.log(
          [
            k.spec.keyId,
            k.spec.name,
            k.spec.prefix,
            k.spec.utilities.join(','),
            k.spec.rateLimitPerMinute,
            k.spec.expiresAt ?? 'never',
            k.spec.revokedAt ?? '-',
          ].join('\t'),
        )
      return
    }
    case 'revoke': {
      const id = positionals[0]
      if (!id) throw new UsageError('keys revoke needs a key id (key_...)')
      try {
        await admin.revoke(id)
      } catch (err) {
        if (apiStatus(err) === 404) throw new UsageError(`no API key ${id}`)
        throw err
      }
      console.log(`API key ${id} revoked.`)
      return
    }
    case 'rotate-secret':
    case 'reveal-secret': {
      const id = positionals[0]
      if (!id) throw new UsageError(`keys ${command} needs a key id (key_...)`)
      let revealed: RevealedSecret
      try {
        revealed = command === 'rotate-secret' ? await admin.rotateSecret(id) : await admin.revealSecret(id)
      } catch (err) {
        if (apiStatus(err) === 404) throw new UsageError(`no API key ${id}`)
        if (err instanceof RevokedKeyError) throw new UsageError(err.message)
        throw err
      }
      if (values.json) return void console.log(JSON.stringify(revealed))
      const note =
        revealed.source === 'workspace'
          ? '\n(this key has no secret of its own and uses the workspace secret; `keys rotate-secret` gives it one)'
          : ''
      const heading =
        command === 'rotate-secret'
          ? `New signing secret of ${id} (signs every callback attempt from now on):`
          : `Signing secret of ${id}:`
      console.log(`${heading}\n\n  ${revealed.signingSecret}\n${note}`)
      return
    }
    default:
      throw new UsageError(USAGE)
  }
}

/** `dutil callbacks redeliver JOB_ID`: asks the operator for a new delivery round (platform/callback-redelivery.ts). */
async function redeliverCommand(command: string | undefined, rest: string[]): Promise<void> {
  const id = rest[0]
  if (command !== 'redeliver' || !id) throw new UsageError('usage: dutil callbacks redeliver JOB_ID')
  if (!ulidOf(id, 'job')) throw new UsageError(`${id} is not a job id (job_...)`)
  const namespace = process.env.DUTIL_NAMESPACE || 'dutil'
  const custom = kubeConfig().makeApiClient(CustomObjectsApi)
  const name = objectNameOf(id)
  let uj: UtilityJobResource | undefined
  try {
    uj = (await custom.getNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace,
      plural: UTILITY_JOB.plural,
      name,
    })) as UtilityJobResource
  } catch (err) {
    if (apiStatus(err) !== 404) throw err
  }
  const problem = redeliveryProblem(uj)
  if (problem) throw new Error(`cannot redeliver ${id}: ${problem}`)
  const at = await requestRedelivery(custom, namespace, name)
  console.log(
    `Redelivery of ${id}'s callback asked for at ${at} (round ${(uj!.status?.callback?.round ?? 1) + 1}); the operator sends it with the same webhook-id.`,
  )
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError) console.error(err.message)
  else console.error(`dutil: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(err instanceof UsageError ? 2 : 1)
})
