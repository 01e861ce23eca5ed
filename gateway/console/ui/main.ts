import { ApiFailure, call, setCsrfToken, whenSignedOut } from './api.js'
import type { Me } from './api-types.js'
import { errorBox, h, replace } from './dom.js'
import type { Page } from './page.js'
import { invitePage, signInPage } from './pages-auth.js'
import { jobPage, jobsPage } from './pages-jobs.js'
import { keysPage } from './pages-keys.js'
import { accountPage, membersPage } from './pages-people.js'
import { playgroundPage } from './pages-playground.js'
import { usagePage } from './pages-usage.js'

type Render = (p: Page) => Promise<void>
interface Route {
  pattern: RegExp
  render: Render
  public?: boolean
  nav?: string
  action?: string
}

const ROUTES: Route[] = [
  { pattern: /^\/console\/sign-in$/, render: signInPage, public: true },
  // The token is in the fragment (never sent to the server); links made before it, in the path.
  { pattern: /^\/console\/invite(?:\/([\w-]+))?$/, render: invitePage, public: true },
  { pattern: /^\/console\/jobs$/, render: jobsPage, nav: 'Jobs', action: 'jobs.read' },
  { pattern: /^\/console\/jobs\/(job_[0-9A-Z]{26})$/, render: jobPage, action: 'jobs.read' },
  { pattern: /^\/console\/keys$/, render: keysPage, nav: 'API keys', action: 'keys.read' },
  { pattern: /^\/console\/usage$/, render: usagePage, nav: 'Usage', action: 'usage.read' },
  { pattern: /^\/console\/playground$/, render: playgroundPage, nav: 'Playground', action: 'playground.run' },
  { pattern: /^\/console\/members$/, render: membersPage, nav: 'Members', action: 'members.read' },
  { pattern: /^\/console\/account$/, render: accountPage, nav: 'Account' },
]
const NAV_PATHS: Record<string, string> = {
  Jobs: '/console/jobs',
  'API keys': '/console/keys',
  Usage: '/console/usage',
  Playground: '/console/playground',
  Members: '/console/members',
  Account: '/console/account',
}

let me: Me | null = null
const app = document.getElementById('app')!

async function loadMe(): Promise<void> {
  try {
    me = await call<Me>('GET', '/session', undefined, { quiet401: true })
    setCsrfToken(me.csrfToken)
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) {
      me = null
      setCsrfToken('')
      return
    }
    throw err
  }
}

const may = (action: string) => (me ? (me.permissions[action] ?? 'none') !== 'none' : false)
const mayAll = (action: string) => (me ? me.permissions[action] === 'all' : false)

function navigate(url: string, replaceState = false): void {
  if (replaceState) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  void render()
}

function shell(route: Route, main: HTMLElement): HTMLElement {
  if (route.public || !me) return h('main', { id: 'main', class: 'main-public' }, main)
  const links = ROUTES.filter((r) => r.nav && (!r.action || may(r.action))).map((r) => {
    const href = NAV_PATHS[r.nav!]
    const current =
      location.pathname === href || (href === '/console/jobs' && location.pathname.startsWith('/console/jobs/'))
    return h('li', {}, h('a', { href, 'aria-current': current ? 'page' : null }, r.nav!))
  })
  const signOut = h(
    'button',
    {
      type: 'button',
      class: 'button secondary small',
      onclick: async () => {
        await call('DELETE', '/session').catch(() => undefined)
        me = null
        navigate('/console/sign-in', true)
      },
    },
    'Sign out',
  )
  return h(
    'div',
    { class: 'layout' },
    h(
      'header',
      { class: 'topbar' },
      h('a', { class: 'brand', href: '/console/jobs' }, 'dutil', h('span', { class: 'brand-sub' }, ' console')),
      h('nav', { 'aria-label': 'Console' }, h('ul', {}, links)),
      h(
        'div',
        { class: 'who' },
        h('span', { class: 'who-name', 'data-testid': 'who' }, me.user.name),
        h('span', { class: `badge badge-role` }, me.user.role),
        signOut,
      ),
    ),
    h('main', { id: 'main', tabindex: '-1' }, main),
  )
}

async function render(): Promise<void> {
  const path = location.pathname.replace(/\/+$/, '') || '/console'
  if (path === '/console') return navigate(me ? '/console/jobs' : '/console/sign-in', true)
  const route = ROUTES.find((r) => r.pattern.test(path))
  const main = h('div', { class: 'page' })
  if (!route) {
    replace(app, shell(ROUTES[2], main))
    replace(
      main,
      h('h1', {}, 'Page not found'),
      h('p', {}, 'There is nothing at this address. ', h('a', { href: '/console/jobs' }, 'Go to the jobs.')),
    )
    return
  }
  if (!route.public && !me)
    return navigate(`/console/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, true)
  if (route.action && !may(route.action)) {
    replace(app, shell(route, main))
    replace(main, h('h1', {}, 'Not available'), errorBox('Your role does not give access to this page.'))
    return
  }
  replace(app, shell(route, main))
  const page: Page = {
    main,
    me,
    params: route.pattern.exec(path)!.slice(1),
    query: new URLSearchParams(location.search),
    navigate,
    refreshMe: loadMe,
    may,
    mayAll,
  }
  try {
    await route.render(page)
  } catch (err) {
    replace(
      main,
      errorBox(err instanceof Error ? err.message : String(err), () => void render()),
    )
  }
  if (!route.public) document.getElementById('main')?.focus({ preventScroll: true })
}

document.addEventListener('click', (e) => {
  const a = (e.target as Element).closest('a')
  if (
    !a ||
    e.defaultPrevented ||
    e.button !== 0 ||
    e.metaKey ||
    e.ctrlKey ||
    e.shiftKey ||
    a.target ||
    a.hasAttribute('download')
  )
    return
  const url = new URL(a.href, location.href)
  if (
    url.origin !== location.origin ||
    !url.pathname.startsWith('/console/') ||
    url.pathname.startsWith('/console/api/')
  )
    return
  e.preventDefault()
  navigate(url.pathname + url.search)
})
window.addEventListener('popstate', () => void render())
whenSignedOut(() => {
  me = null
  navigate(`/console/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, true)
})

try {
  await loadMe()
  await render()
} catch (err) {
  replace(
    app,
    h(
      'main',
      { id: 'main', class: 'main-public' },
      errorBox(`The console could not start: ${err instanceof Error ? err.message : String(err)}`, () =>
        location.reload(),
      ),
    ),
  )
}
