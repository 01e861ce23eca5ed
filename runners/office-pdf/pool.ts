import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { servePool } from '../common/pool-server.js'
import { runJob } from '../common/run-utility.js'
import { officeHandler, type OfficePdfInput } from './handler.js'
import { OFFICE_PDF_LIMITS } from './limits.js'
import { Office } from './office.js'

/**
 * office-pdf in pool mode (docs/adr/0026-runner-pools.md): one LibreOffice kept warm for the
 * pod's tenant, in a profile of its own, started anew (with a new profile) after
 * OFFICE_PDF_LIMITS.restartEvery conversions, after a conversion that failed in LibreOffice
 * itself, and after a job stopped at its deadline. Each job's files are in its own scratch
 * directory, removed after it.
 */
let warm: { office: Office; profile: string } | undefined
let starting: Promise<Office> | undefined

async function stopOffice(): Promise<void> {
  const w = warm
  warm = undefined
  if (!w) return
  await w.office.stop()
  await rm(w.profile, { recursive: true, force: true }).catch(() => {})
}

async function startOffice(log: Logger): Promise<Office> {
  const profile = await mkdtemp(join(tmpdir(), 'office-profile-'))
  try {
    const office = await Office.start(profile, `dutil-office-${randomBytes(8).toString('hex')}`)
    warm = { office, profile }
    log.info({ startMs: office.startMs }, 'LibreOffice started')
    return office
  } catch (err) {
    await rm(profile, { recursive: true, force: true }).catch(() => {})
    throw err
  }
}

/** The warm LibreOffice, started anew when it is gone or has done its share of conversions. */
async function office(log: Logger): Promise<Office> {
  if (warm && (!warm.office.alive || warm.office.conversions >= OFFICE_PDF_LIMITS.restartEvery)) await stopOffice()
  if (warm) return warm.office
  starting ??= startOffice(log).finally(() => (starting = undefined))
  return starting
}

await servePool((log) => {
  const handler = officeHandler(() => office(log))
  return {
    async start() {
      await office(log)
    },
    async run(config) {
      const outcome = await runJob<OfficePdfInput>(config, handler, log)
      // A conversion LibreOffice itself failed: the next job gets a new one.
      if (!outcome.ok && outcome.failure.code === 'upstream_error') await stopOffice()
      return outcome
    },
    abort() {
      warm?.office.kill()
    },
    kept() {
      return warm?.office.pid ? [warm.office.pid] : []
    },
  }
}, stopOffice)
