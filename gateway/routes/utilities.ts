import Router from '@koa/router'
import { keyAllows } from '../../contract/api-keys.js'
import { catalog, enabledUtility } from '../../runners/catalog.js'
import type { UtilityDefinition } from '../../contract/utility.js'
import { notFound } from '../api-error.js'
import type { AuthenticatedKey } from '../auth.js'

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
    const u = enabledUtility(ctx.params.slug)
    if (!u) throw notFound(`There is no utility named ${JSON.stringify(ctx.params.slug.slice(0, 100))}.`)
    ctx.body = catalogEntry(u)
  })
  return router
}
