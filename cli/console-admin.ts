import { parseArgs } from 'node:util'
import type { KubeConfig } from '@kubernetes/client-node'
import { EMAIL_PATTERN, normalizeEmail } from '../contract/console-resources.js'
import { PeopleStore } from '../platform/people-store.js'

export const ADMIN_USAGE = `  admin create --email EMAIL [--url URL]   a one-time sign-in link (valid 7 days) for a console admin;
                                           the first admin is made this way (no e-mail is ever sent)`

/**
 * `dutil admin create`: the console's bootstrap. Issues an admin invite straight through the
 * Kubernetes API (whoever can run this can already change any resource) and prints its link;
 * the person sets a name and password there, or continues with the identity provider.
 */
export async function adminCommand(
  command: string | undefined,
  args: string[],
  kubeConfig: () => KubeConfig,
  usage: (m: string) => Error,
): Promise<void> {
  if (command !== 'create') throw usage(`usage: dutil admin create --email EMAIL [--url URL]`)
  const { values } = parseArgs({
    args,
    options: { email: { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean', default: false } },
  })
  if (!values.email || !EMAIL_PATTERN.test(values.email))
    throw usage('admin create needs --email with an e-mail address')
  const email = normalizeEmail(values.email)
  const base = (values.url || process.env.DUTIL_PUBLIC_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '')
  const people = new PeopleStore(kubeConfig(), process.env.DUTIL_NAMESPACE || 'dutil')
  const existing = await people.findUserByEmail(email)
  if (existing && !existing.spec.disabled && existing.spec.role === 'admin')
    throw usage(`${email} is already an active admin: sign in at ${base}/console/`)
  if (existing)
    throw usage(
      `${email} already has a console account (${existing.spec.role}${existing.spec.disabled ? ', disabled' : ''}); an admin can change it on the Members page`,
    )
  const { invite, token } = await people.invite({ email, role: 'admin', invitedBy: 'cli' })
  const link = `${base}/console/invite/${token}`
  if (values.json)
    return void console.log(JSON.stringify({ email, role: 'admin', link, expiresAt: invite.spec.expiresAt }))
  console.log(
    `One-time sign-in link for ${email} (admin), valid until ${invite.spec.expiresAt}:\n\n  ${link}\n\nOpen it to set a name and password. It works once; running this again replaces it.`,
  )
}
