/** One environment setting, read at start: the fallback when unset or empty, else an error naming it. */
export function setting(name: string, fallback?: string): string {
  const v = process.env[name] || fallback
  if (v === undefined || v === '') throw new Error(`missing setting ${name}`)
  return v
}
