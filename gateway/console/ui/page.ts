import type { Me } from './api-types.js'

/** What a page gets: where to render, who is signed in, the route's parameters. */
export interface Page {
  main: HTMLElement
  me: Me | null
  params: string[]
  query: URLSearchParams
  navigate(url: string, replace?: boolean): void
  /** Re-reads the session (after sign-in, 2FA changes) and re-renders. */
  refreshMe(): Promise<void>
  /** Whether the person may do an action at all. */
  may(action: string): boolean
  /** Whether the person's scope for an action is everything (staff) rather than their own. */
  mayAll(action: string): boolean
}

export function title(text: string): void {
  document.title = `${text} · dutil console`
}
