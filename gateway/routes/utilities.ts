import Router from '@koa/router'
import { keyAllows } from '../../contract/api-keys.js'
import { catalog, enabledUtility } from '../../runners/catalog.js'
import type { UtilityDefinition } from '../../contract/utility.js'
import { ApiError, notFound } from '../api-error.js'
import type { AuthenticatedKey } from '../auth.js'

/** The enabled utility of a slug, else the 404 every route answers for it. */
export function utilityNamed(slug: string): UtilityDefinition {
  const u = enabledUtility(slug)
  if (!u) throw notFound(`There is no utility named ${JSON.stringify(slug.slice(0, 100))}.`)
  return u
}

/** The utility a key runs: enabled (else 404) and among the key's utilities (else 403). */
export function usableUtility(slug: string, key: AuthenticatedKey): UtilityDefinition {
  const u = utilityNamed(slug)
  if (!keyAllows(key.utilities, u.slug)) throw new ApiError('forbidden', `This API key may not call ${u.slug}.`)
  return u
}

/** A catalog entry as the API shows it. */
export function catalogEntry(u: UtilityDefinition) {
  return {
    slug: u.slug,
    name: u.name,
    description: u.description,
    category: u.category,
    icon: u.icon,
    target: u.target,
    maxDurationSeconds: u.maxDurationSeconds,
    inputSchema: u.inputSchema,
    exampleInput: u.exampleInput,
    enabled: u.enabled,
  }
}

export function utilityRoutes(): Router {
  const router = new Router()
  router.get('/v1/utilities', (ctx) => {
    const key = ctx.state.key as AuthenticatedKey
    const items = [...catalog.values()].filter((u) => u.enabled && keyAllows(key.utilities, u.slug)).map(catalogEntry)
    ctx.body = { items }
  })
  router.get('/v1/utilities/:slug', (ctx) => {
    ctx.body = catalogEntry(utilityNamed(ctx.params.slug))
  })
  return router
}
