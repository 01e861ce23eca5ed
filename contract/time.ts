/** ISO-8601 UTC with milliseconds (`YYYY-MM-DDTHH:MM:SS.mmmZ`), the only timestamp form dutil emits. */
export function isoMs(t: number | Date): string {
  return (typeof t === 'number' ? new Date(t) : t).toISOString()
}

/** Parses a timestamp dutil or Kubernetes wrote; null for null/undefined/unparseable. */
export function parseTime(value: string | Date | null | undefined): number | null {
  if (!value) return null
  const ms = value instanceof Date ? value.getTime() : Date.parse(value)
  return Number.isNaN(ms) ? null : ms
}

/** The `<YYYY-MM-DD>` part of storage keys, in UTC. */
export function utcDay(t: number): string {
  return isoMs(t).slice(0, 10)
}
