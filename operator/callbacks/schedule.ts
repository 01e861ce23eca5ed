/**
 * The callback retry schedule (docs/api.md, Callbacks): at most 8 attempts, the
 * first retry 10 s after a failed attempt, each later one twice as long after the one before
 * (10, 20, 40 … 640 s: about 21 minutes in all). Every attempt has 10 s to be answered.
 */
export interface CallbackSchedule {
  maxAttempts: number
  firstDelayMs: number
  factor: number
  timeoutMs: number
}

export const CALLBACK_SCHEDULE: Readonly<CallbackSchedule> = {
  maxAttempts: 8,
  firstDelayMs: 10_000,
  factor: 2,
  timeoutMs: 10_000,
}

/**
 * The schedule with its back-off delays multiplied by `scale` (tests only: the test platform
 * runs with a small scale so that eight attempts take seconds). The timeout is never scaled.
 */
export function scaledSchedule(scale: number, base: CallbackSchedule = CALLBACK_SCHEDULE): CallbackSchedule {
  if (!(scale > 0 && scale <= 1)) throw new Error(`the callback delay scale must be in (0, 1], not ${scale}`)
  return { ...base, firstDelayMs: Math.max(1, Math.round(base.firstDelayMs * scale)) }
}

/** How long to wait after failed attempt number `attemptsMade` (1-based); null when none is left. */
export function retryDelayMs(attemptsMade: number, schedule: CallbackSchedule = CALLBACK_SCHEDULE): number | null {
  if (attemptsMade < 1) return 0
  if (attemptsMade >= schedule.maxAttempts) return null
  return schedule.firstDelayMs * schedule.factor ** (attemptsMade - 1)
}
