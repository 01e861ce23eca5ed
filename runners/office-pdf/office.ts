import { spawn, type ChildProcess } from 'node:child_process'
import { killWithRunner } from '../common/child-groups.js'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { allowedEnv } from '../common/child-env.js'

/**
 * One LibreOffice, driven through office_convert.py (Debian's python3 and its UNO bridge): the
 * runner starts it, sends one conversion at a time and reads one JSON line back. Job mode starts
 * one per job; pool mode keeps one for the pod's tenant and starts it anew now and then.
 */

/** What keeps LibreOffice from fetching linked content (office_convert.py): each is enough alone. */
export type OfficeGuard = 'links' | 'referer' | 'load' | 'proxy'

export const SOFFICE = process.env.DUTIL_SOFFICE_PATH || '/usr/bin/soffice'
/** Debian's python3: its `uno` module is LibreOffice's (a python3 from elsewhere has none). */
export const OFFICE_PYTHON = process.env.DUTIL_OFFICE_PYTHON || '/usr/bin/python3'

/** The converter beside this module (runners/bundle-runners.ts copies it next to the bundle). */
function converterPath(): string {
  const beside = fileURLToPath(new URL('./office_convert.py', import.meta.url))
  if (existsSync(beside)) return beside
  return fileURLToPath(new URL('../office_convert.py', import.meta.url))
}

/**
 * The office processes' environment: only what they need, never the runner's (its storage
 * credentials, the pool's token). HOME is the profile: LibreOffice writes nothing elsewhere.
 */
const OFFICE_ENV = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'FONTCONFIG_FILE', 'FONTCONFIG_PATH'] as const

export function officeEnv(profile: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    // soffice is a shell script: it needs the system's tools on PATH.
    PATH: '/usr/local/bin:/usr/bin:/bin',
    ...allowedEnv(OFFICE_ENV, env),
    HOME: profile,
    TMPDIR: profile,
    // No Java: nothing a conversion needs, and a JVM start per process.
    SAL_DISABLE_JAVA: '1',
  }
}

/** The PDF export's options (LibreOffice's FilterData); absent: LibreOffice's default, pictures kept as they are. */
export interface OfficeExportOptions {
  imageQuality?: number
  maxImageResolution?: 75 | 150 | 300 | 600 | 1200
  losslessImages?: boolean
  exportBookmarks?: boolean
  exportNotes?: boolean
  exportFormFields?: boolean
  singlePageSheets?: boolean
}

export interface OfficeRequest extends OfficeExportOptions {
  input: string
  output: string
  pageRange?: string
  landscape?: boolean
  /** 0: plain PDF; 1, 2, 3: PDF/A-1b, PDF/A-2b, PDF/A-3b. */
  pdfVersion?: 0 | 1 | 2 | 3
  pdfua?: boolean
  /** Opens a protected doc or xls file (LibreOffice decrypts those itself); never logged. */
  password?: string
  /** The filter LibreOffice loads the document with, and its options (plain text only). */
  importFilter?: string
  importOptions?: string
}

export type OfficeAnswer =
  | { ok: true; family: 'text' | 'spreadsheet' | 'presentation' | 'drawing'; ms: number }
  | { ok: false; reason: 'password' | 'load' | 'export' | 'office'; message: string }

/** The longest line the converter may write: anything longer is a broken converter. */
const MAX_LINE = 64 * 1024

export class Office {
  private buffered = ''
  private waiting: ((line: string | null) => void) | undefined
  private lines: string[] = []
  private gone = false
  /** Conversions this LibreOffice has done. */
  conversions = 0
  readonly exited: Promise<void>

  private constructor(
    readonly child: ChildProcess,
    /** ms from spawn to LibreOffice listening and connected. */
    public startMs = 0,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()))
    child.once('error', () => undefined)
    child.stdin!.on('error', () => undefined)
    child.stdout!.setEncoding('utf8')
    child.stdout!.on('data', (chunk: string) => {
      this.buffered += chunk
      if (this.buffered.length > MAX_LINE && !this.buffered.includes('\n')) return this.kill()
      let end: number
      while ((end = this.buffered.indexOf('\n')) >= 0) {
        this.lines.push(this.buffered.slice(0, end))
        this.buffered = this.buffered.slice(end + 1)
      }
      this.deliver()
    })
    void this.exited.then(() => {
      this.gone = true
      this.deliver()
    })
  }

  private deliver(): void {
    const w = this.waiting
    if (!w) return
    if (this.lines.length) {
      this.waiting = undefined
      w(this.lines.shift()!)
    } else if (this.gone) {
      this.waiting = undefined
      w(null)
    }
  }

  private nextLine(): Promise<string | null> {
    return new Promise((resolve) => {
      this.waiting = resolve
      this.deliver()
    })
  }

  /**
   * Starts LibreOffice with its profile in `profile` (an empty directory of its own); settles once
   * it listens. `guards` keeps fewer of the converter's guards against linked content: only the
   * test that shows each alone holds passes it (office_convert.py).
   */
  static async start(profile: string, pipeName: string, guards?: OfficeGuard[]): Promise<Office> {
    const args = [converterPath(), SOFFICE, profile, pipeName, ...(guards ? [`--guards=${guards.join(',')}`] : [])]
    const child = spawn(OFFICE_PYTHON, args, {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: officeEnv(profile),
      cwd: profile,
      detached: true, // its own process group: kill() takes soffice along
    })
    const office = new Office(child)
    killWithRunner(child)
    const line = await office.nextLine()
    const ready = parse(line) as { ready?: boolean; startMs?: number } | null
    if (!ready?.ready) {
      office.kill()
      throw new Error('LibreOffice did not start')
    }
    office.startMs = ready.startMs ?? 0
    return office
  }

  get pid(): number | undefined {
    return this.child.pid
  }

  get alive(): boolean {
    return !this.gone
  }

  /** Converts one document; a LibreOffice that died or broke answers `office`. */
  async convert(req: OfficeRequest): Promise<OfficeAnswer> {
    if (this.gone) return { ok: false, reason: 'office', message: 'LibreOffice is not running' }
    this.conversions++
    this.child.stdin!.write(`${JSON.stringify(req)}\n`)
    const answer = parse(await this.nextLine()) as OfficeAnswer | null
    if (!answer || typeof answer.ok !== 'boolean')
      return { ok: false, reason: 'office', message: 'LibreOffice stopped during the conversion' }
    return answer
  }

  /** Kills LibreOffice and its converter at once. */
  kill(): void {
    try {
      if (this.child.pid) process.kill(-this.child.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }

  /**
   * Ends LibreOffice: its converter closes it on the end of its input, killed if it takes longer
   * than `graceMs`. Anything left in its group goes when the converter exits (`killWithRunner`).
   */
  async stop(graceMs = 5_000): Promise<void> {
    if (this.gone) return
    this.child.stdin!.end()
    const timer = setTimeout(() => this.kill(), graceMs)
    await this.exited
    clearTimeout(timer)
  }
}

function parse(line: string | null): unknown {
  if (line === null) return null
  try {
    return JSON.parse(line)
  } catch {
    return null
  }
}
