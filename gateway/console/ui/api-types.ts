/**
 * The console API's answers, as types: the one declaration both sides use. The server's console
 * routes (gateway/console/routes/) build their bodies as these types and the browser code
 * (this folder) reads them, so a field changed on one side is a compile error on the other.
 * Types only and no imports: the console's browser build and the server's both compile it
 * (test/support/layering.ts lets the gateway import this file, and nothing else, of the UI).
 */

export type Scope = 'all' | 'own' | 'none'

export interface Me {
  user: {
    id: string
    email: string
    name: string
    role: 'admin' | 'member' | 'external'
    totpEnabled: boolean
    signInMethod: string
    hasPassword?: boolean
  }
  csrfToken: string
  permissions: Record<string, Scope>
}

export interface ConsolePublicConfig {
  oidc: { enabled: boolean; displayName?: string }
}

export interface JobSummary {
  id: string
  utility: string
  mode: string
  status: string
  source: string
  createdAt: string
  finishedAt: string | null
  totalMs: number | null
  upstreamMs: number | null
  errorCode: string | null
  apiKeyName: string | null
  apiKeyId: string | null
  userEmail: string | null
  fileCount: number
}

/** A page of the job list, newest first; `nextCursor` asks for the next. */
export interface JobPage {
  items: JobSummary[]
  nextCursor: string | null
}

export interface JobDetail {
  job: {
    id: string
    utility: string
    mode: string
    status: string
    createdAt: string
    startedAt: string | null
    finishedAt: string | null
    timings: { queueMs: number | null; upstreamMs: number | null; storageMs: number | null; totalMs: number | null }
    progress: { done: number; total: number | null; unit: string; updatedAt: string } | null
    metadata: Record<string, unknown> | null
    result:
      | ({
          files: Array<{
            url: string
            name: string
            size: number | null
            contentType: string | null
            pageNumber?: number
            path?: string
            urlExpiresAt?: string
          }>
        } & Record<string, unknown>)
      | null
    error: { code: string; message: string; upstreamStatus?: number } | null
    callback: { url: string; status: string; attempts: number } | null
  }
  source: string
  apiKeyName: string | null
  apiKeyId: string | null
  userEmail: string | null
  callbackDelivery: {
    status: string
    attempts: number
    round: number
    lastAttemptAt: string | null
    lastStatusCode: number | null
    lastError: string | null
    nextAttemptAt: string | null
    finishedAt: string | null
  } | null
  callbackLog: Array<{
    round: number
    attempt: number
    at: string
    durationMs: number
    outcome: string
    statusCode: number | null
    errorClass: string | null
    error: string | null
    nextAttemptAt: string | null
  }>
}

export interface KeyItem {
  id: string
  name: string
  prefix: string
  utilities: string[]
  rateLimitPerMinute: number
  createdAt: string
  expiresAt: string | null
  revokedAt: string | null
  lastUsedAt: string | null
  status: string
  createdBy: string | null
  can: { revoke: boolean; revealSecret: boolean; rotateSecret: boolean; setRateLimit: boolean }
}

export interface KeyList {
  items: KeyItem[]
  defaults: { rateLimitPerMinute: number; expiryDays: number[]; utilities: string[] }
}

export interface Member {
  id: string
  email: string
  name: string
  role: string
  disabled: boolean
  totpEnabled: boolean
  identityProvider: boolean
  createdAt: string
  lastSignInAt: string | null
}

export interface Invite {
  id: string
  email: string
  role: string
  createdAt: string
  expiresAt: string
  invitedBy: string
}

/** A catalog entry (the public API's `GET /v1/utilities` gives the same). */
export interface Utility {
  slug: string
  name: string
  description: string
  category: string
  icon: string
  target: string
  maxDurationSeconds: number
  /** The input's JSON Schema. */
  inputSchema: object
  exampleInput: Record<string, unknown>
  enabled: boolean
}

export interface Totals {
  jobs: number
  succeeded: number
  failed: number
  cancelled: number
  totalMs: number
  upstreamMs: number
}

/** One day of the usage chart. */
export interface DayPoint extends Totals {
  day: string
}

export interface Usage {
  from: string
  to: string
  total: Totals
  days: DayPoint[]
  byKey: Array<Totals & { keyId: string; keyName: string; source: string; userEmail: string }>
  byUtility: Array<Totals & { utility: string }>
  byErrorCode: Array<{ code: string; count: number }>
}
