import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { runUtility } from '../common/run-utility.js'
import { Office } from './office.js'
import { officeHandler } from './handler.js'

/** Job mode: LibreOffice starts at once, in a profile of its own, while the runner reads its job and downloads the document. */
const profile = mkdtempSync(join(tmpdir(), 'office-profile-'))
const office = Office.start(profile, `dutil-office-${randomBytes(8).toString('hex')}`)
office.catch(() => {})

await runUtility(officeHandler(() => office))
