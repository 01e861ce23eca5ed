import { describe, expect, it } from 'vitest'
import { ACTIONS, can, lastAdminProblem, type Action, type Ownership } from './permissions.js'
import type { Role } from '../../contract/console-resources.js'

// role × action × ownership, written out as the README's console roles read: true = allowed.
// [action, admin own, admin other, member own, member other, external own, external other]
const TABLE: Array<[Action, boolean, boolean, boolean, boolean, boolean, boolean]> = [
  ['keys.read', true, true, true, true, true, false],
  ['keys.create', true, true, true, true, true, false],
  ['keys.revoke', true, true, true, true, true, false],
  ['keys.secret.reveal', true, true, true, true, true, false],
  ['keys.secret.rotate', true, true, true, true, true, false],
  ['keys.rateLimit.set', true, true, true, true, false, false],
  ['jobs.read', true, true, true, true, true, false],
  ['callbacks.redeliver', true, true, true, true, true, false],
  ['usage.read', true, true, true, true, true, false],
  ['playground.run', true, true, true, true, true, false],
  ['members.read', true, true, false, false, false, false],
  ['members.manage', true, true, false, false, false, false],
  ['workspaceSecret.reveal', true, true, true, true, false, false],
  ['workspaceSecret.rotate', true, true, false, false, false, false],
  ['playgroundSecret.reveal', true, true, true, true, false, false],
  ['playgroundSecret.rotate', true, true, false, false, false, false],
]

const cases = TABLE.flatMap(([action, ...allowed]) => {
  const combos: Array<[Role, Ownership]> = [
    ['admin', 'own'],
    ['admin', 'other'],
    ['member', 'own'],
    ['member', 'other'],
    ['external', 'own'],
    ['external', 'other'],
  ]
  return combos.map(([role, ownership], i) => ({ action, role, ownership, allowed: allowed[i] }))
})

describe('console permissions', () => {
  it('covers every action', () => {
    expect(TABLE.map((r) => r[0]).sort()).toEqual([...ACTIONS].sort())
  })

  it.each(cases)('$role may $action on $ownership things: $allowed', ({ role, action, ownership, allowed }) => {
    expect(can(role, action, ownership)).toBe(allowed)
  })
})

describe('last-admin rule', () => {
  const people = [
    { id: 'a', role: 'admin' as const, disabled: false },
    { id: 'b', role: 'member' as const, disabled: false },
    { id: 'c', role: 'admin' as const, disabled: true },
  ]
  it('refuses demoting or disabling the last active admin', () => {
    expect(lastAdminProblem(people, 'a', { role: 'member' })).toMatch(/at least one active admin/)
    expect(lastAdminProblem(people, 'a', { disabled: true })).toMatch(/at least one active admin/)
  })
  it('allows it once another admin is active', () => {
    expect(lastAdminProblem(people, 'b', { role: 'admin' })).toBeNull()
    const two = [...people, { id: 'd', role: 'admin' as const, disabled: false }]
    expect(lastAdminProblem(two, 'a', { role: 'external' })).toBeNull()
    expect(lastAdminProblem(two, 'a', { disabled: true })).toBeNull()
  })
  it('allows changes that leave the active admin alone', () => {
    expect(lastAdminProblem(people, 'c', { role: 'member' })).toBeNull()
    expect(lastAdminProblem(people, 'b', { disabled: true })).toBeNull()
  })
})
