import { createHash } from 'node:crypto'
import Type, { type Static } from 'typebox'
import type { ObjectMeta } from './crd-schemas.js'
import { Nullable } from './schema-helpers.js'

/**
 * The console's people and invites as custom resources (see docs/adr/0005). Object names are
 * derived from the e-mail address, so Kubernetes' name uniqueness is what keeps one account and
 * one open invite per address: a second account for the same address is a 409, and re-inviting
 * an address replaces (revokes) the earlier invite.
 */
export const CONSOLE_USER = {
  kind: 'ConsoleUser',
  plural: 'consoleusers',
  singular: 'consoleuser',
  shortNames: ['dcu'],
} as const
export const CONSOLE_INVITE = {
  kind: 'ConsoleInvite',
  plural: 'consoleinvites',
  singular: 'consoleinvite',
  shortNames: ['dci'],
} as const

export const ROLES = ['admin', 'member', 'external'] as const
export type Role = (typeof ROLES)[number]
export const RoleSchema = Type.Union([Type.Literal('admin'), Type.Literal('member'), Type.Literal('external')])

export const ConsoleUserSpecSchema = Type.Object({
  userId: Type.String({ description: 'Public id, usr_ + ULID.' }),
  email: Type.String({ description: 'Lower-cased; the identity of the account (the object name derives from it).' }),
  name: Type.String({ maxLength: 200 }),
  role: RoleSchema,
  disabled: Type.Boolean(),
  createdAt: Type.String(),
  totpEnabled: Type.Boolean({
    description: 'Password sign-in asks for a TOTP code (the secret is in the credentials Secret).',
  }),
  oidcSubject: Type.Optional(
    Type.String({ description: 'The identity provider subject bound at the first identity-provider sign-in.' }),
  ),
  credentialsSecretName: Type.String({
    description:
      "Secret holding this person's passwordHash (argon2id) and totpSecret entries (dutil-console-credentials).",
  }),
})
export type ConsoleUserSpec = Static<typeof ConsoleUserSpecSchema>

export const ConsoleUserStatusSchema = Type.Object({
  lastSignInAt: Nullable(Type.String()),
})

export const ConsoleInviteSpecSchema = Type.Object({
  inviteId: Type.String({ description: 'Public id, inv_ + ULID.' }),
  email: Type.String(),
  role: RoleSchema,
  tokenHash: Type.String({
    pattern: '^[0-9a-f]{64}$',
    description: 'SHA-256 of the link token; the token itself is never stored.',
  }),
  createdAt: Type.String(),
  expiresAt: Type.String(),
  invitedBy: Type.String({ description: 'E-mail of the admin who invited, or "cli" for the bootstrap.' }),
})
export type ConsoleInviteSpec = Static<typeof ConsoleInviteSpecSchema>

export interface ConsoleUserResource {
  apiVersion: string
  kind: 'ConsoleUser'
  metadata: ObjectMeta
  spec: ConsoleUserSpec
  status?: { lastSignInAt: string | null }
}

export interface ConsoleInviteResource {
  apiVersion: string
  kind: 'ConsoleInvite'
  metadata: ObjectMeta
  spec: ConsoleInviteSpec
}

/** E-mail addresses compare case-insensitively; dutil stores them lower-cased and trimmed. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}

function emailDigest(email: string): string {
  return createHash('sha256').update(normalizeEmail(email)).digest('hex').slice(0, 40)
}

export const userObjectName = (email: string) => `user-${emailDigest(email)}`
export const inviteObjectName = (email: string) => `invite-${emailDigest(email)}`

export const INVITE_TTL_MS = 7 * 86_400_000

/** What the console and the CLI accept as an e-mail address. */
export const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,253}\.[^\s@]{1,63}$/
