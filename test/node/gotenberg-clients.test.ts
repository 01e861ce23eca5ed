import { describe, inject, it } from 'vitest'
import { createKey } from '../integration/helpers/keys.js'
import {
  chromiumlyConversions,
  chromiumlyErrors,
  pythonClientRound,
  SERVED_PAGE,
} from '../support/gotenberg-clients.js'
import { putFile } from './helpers.js'

/**
 * Gotenberg's published clients against the chart's Gotenberg routes on a real node
 * (gateway.gotenbergRoutes.enabled, as a platform team turns them on): every conversion runs in a
 * runner container, each request a job of the calling key.
 */
describe.skipIf(inject('nodeBlocker'))("Gotenberg's clients on a real node (kubelet, containerd, runc)", () => {
  const target = async (name: string) => ({
    gatewayUrl: inject('gatewayUrl'),
    key: (await createKey({ name })).key,
    pageUrl: await putFile('gotenberg-page.html', SERVED_PAGE),
  })

  it('chromiumly converts HTML, a URL and office documents, merges and splits, as jobs of its key', async () => {
    await chromiumlyConversions(await target('chromiumly'))
  }, 300_000)

  it('chromiumly reads the errors', async () => {
    await chromiumlyErrors(await target('chromiumly-errors'))
  }, 120_000)

  it('gotenberg-client (Python) converts, merges, splits, checks health and reads an error', async () => {
    await pythonClientRound(await target('gotenberg-client'))
  }, 300_000)
})
