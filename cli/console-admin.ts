import { EMAIL_PATTERN, normalizeEmail } from '../contract/console-resources.js'
import { PeopleStore } from '../platform/people-store.js'
import type { KubeTarget } from './kube-target.js'
import { renderOne, type OutputFormat } from './output.js'
import { UsageError } from './usage-error.js'

/**
 * `dutil admin create`: the console's bootstrap. Issues an admin invite straight through the
 * Kubernetes API (whoever can run this can already change any resource) and prints its link;
 * the person sets a name and password there, or continues with the identity provider.
 */
export async function createAdmin(
  target: KubeTarget,
  o: { email?: string; url?: string },
  format: OutputFormat,
): Promise<string> {
  if (!o.email || !EMAIL_PATTERN.test(o.email))
    throw new UsageError('admin create needs --email with an e-mail address')
  const email = normalizeEmail(o.email)
  const base = (o.url || process.env.DUTIL_PUBLIC_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '')
  const people = new PeopleStore(target.load(), target.namespace)
  const existing = await people.findUserByEmail(email)
  if (existing && !existing.spec.disabled && existing.spec.role === 'admin')
    throw new UsageError(`${email} is already an active admin: sign in at ${base}/console/`)
  if (existing)
    throw new UsageError(
      `${email} already has a console account (${existing.spec.role}${existing.spec.disabled ? ', disabled' : ''}); an admin can change it on the Members page`,
    )
  const { invite, token } = await people.invite({ email, role: 'admin', invitedBy: 'cli' })
  const link = `${base}/console/invite#${token}`
  return renderOne(
    format,
    { email, role: 'admin', link, expiresAt: invite.spec.expiresAt },
    () =>
      `One-time sign-in link for ${email} (admin), valid until ${invite.spec.expiresAt}:\n\n  ${link}\n\nOpen it to set a name and password. It works once; running this again replaces it.`,
  )
}
