import type { Role } from '../../contract/console-resources.js'

/**
 * What each console role may do: the README's console roles (Console) as one table.
 * `all` allows the action on anything, `own` only on what the person owns (keys they created,
 * jobs of those keys and their own playground runs, usage of those keys), `none` never.
 */
export const ACTIONS = [
  'keys.read',
  'keys.create',
  'keys.revoke',
  'keys.secret.reveal',
  'keys.secret.rotate',
  'keys.rateLimit.set',
  'jobs.read',
  /** Send a finished job's callback again (docs/adr/0019; jobs of their own keys for externals). */
  'callbacks.redeliver',
  'usage.read',
  'playground.run',
  'members.read',
  'members.manage',
  'workspaceSecret.reveal',
  'workspaceSecret.rotate',
  /** The secret playground callbacks are signed with (everyone who runs the playground verifies with it). */
  'playgroundSecret.reveal',
  'playgroundSecret.rotate',
] as const
export type Action = (typeof ACTIONS)[number]
export type Scope = 'all' | 'own' | 'none'
export type Ownership = 'own' | 'other'

export const PERMISSIONS: Record<Role, Record<Action, Scope>> = {
  admin: {
    'keys.read': 'all',
    'keys.create': 'all',
    'keys.revoke': 'all',
    'keys.secret.reveal': 'all',
    'keys.secret.rotate': 'all',
    'keys.rateLimit.set': 'all',
    'jobs.read': 'all',
    'callbacks.redeliver': 'all',
    'usage.read': 'all',
    'playground.run': 'all',
    'members.read': 'all',
    'members.manage': 'all',
    'workspaceSecret.reveal': 'all',
    'workspaceSecret.rotate': 'all',
    'playgroundSecret.reveal': 'all',
    'playgroundSecret.rotate': 'all',
  },
  member: {
    'keys.read': 'all',
    'keys.create': 'all',
    'keys.revoke': 'all',
    'keys.secret.reveal': 'all',
    'keys.secret.rotate': 'all',
    'keys.rateLimit.set': 'all',
    'jobs.read': 'all',
    'callbacks.redeliver': 'all',
    'usage.read': 'all',
    'playground.run': 'all',
    'members.read': 'none',
    'members.manage': 'none',
    // Members verify callbacks of keys without a secret of their own with it; only admins rotate it.
    'workspaceSecret.reveal': 'all',
    'workspaceSecret.rotate': 'none',
    'playgroundSecret.reveal': 'all',
    'playgroundSecret.rotate': 'none',
  },
  external: {
    'keys.read': 'own',
    'keys.create': 'own',
    'keys.revoke': 'own',
    'keys.secret.reveal': 'own',
    'keys.secret.rotate': 'own',
    // Their keys get the default rate limit; staff can raise it.
    'keys.rateLimit.set': 'none',
    'jobs.read': 'own',
    'callbacks.redeliver': 'own',
    'usage.read': 'own',
    'playground.run': 'own',
    'members.read': 'none',
    'members.manage': 'none',
    'workspaceSecret.reveal': 'none',
    'workspaceSecret.rotate': 'none',
    // Like the workspace secret, not theirs to see (their playground callbacks are signed with it).
    'playgroundSecret.reveal': 'none',
    'playgroundSecret.rotate': 'none',
  },
}

export function scopeOf(role: Role, action: Action): Scope {
  return PERMISSIONS[role][action]
}

/** Whether `role` may do `action` on something the person owns or does not own. */
export function can(role: Role, action: Action, ownership: Ownership): boolean {
  const scope = scopeOf(role, action)
  return scope === 'all' || (scope === 'own' && ownership === 'own')
}

/** Whether the role may do the action at all (on at least its own things): what the UI offers. */
export function canAtAll(role: Role, action: Action): boolean {
  return scopeOf(role, action) !== 'none'
}

/** The role's table row for the UI (which buttons to show); the server checks every call. */
export function permissionsOf(role: Role): Record<Action, Scope> {
  return { ...PERMISSIONS[role] }
}

export interface AdminView {
  id: string
  role: Role
  disabled: boolean
}

/**
 * The last-admin rule: after the change there must still be an active (not disabled) admin.
 * Returns why the change is refused, or null.
 */
export function lastAdminProblem(
  people: readonly AdminView[],
  targetId: string,
  change: { role?: Role; disabled?: boolean },
): string | null {
  const after = people.map((p) =>
    p.id === targetId
      ? {
          ...p,
          ...(change.role ? { role: change.role } : {}),
          ...(change.disabled !== undefined ? { disabled: change.disabled } : {}),
        }
      : p,
  )
  const activeAdmins = after.filter((p) => p.role === 'admin' && !p.disabled).length
  if (activeAdmins > 0) return null
  return 'There must always be at least one active admin: make someone else an admin first.'
}
