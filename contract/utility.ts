import type { TSchema } from 'typebox'

/**
 * Every utility slug of v1 (docs/api.md's utilities): the five the contract began with, and
 * merge-pdf, office-pdf, html-image, edit-pdf and pdf-info, added within v1 (new utilities are additive). API keys may be scoped to any of
 * them, and the catalog (runners/catalog.ts) implements them.
 */
export const CONTRACT_SLUGS = [
  'html-pdf',
  'html-image',
  'office-pdf',
  'split-pdf',
  'merge-pdf',
  'edit-pdf',
  'pdf-info',
  'zip-files',
  'unzip-files',
  'xls-to-xlsx',
] as const

/** Kubernetes resource quantities for a runner container. */
export interface RunnerResources {
  requests: { cpu: string; memory: string }
  limits: { cpu: string; memory: string }
}

/** The units runners count progress in. */
export type ProgressUnit = 'pages' | 'entries' | 'files'

/** A problem with a valid-shaped input that JSON Schema cannot express (e.g. duplicate names). */
export interface InputProblem {
  path: string
  message: string
}

/**
 * One utility: everything the gateway (validation, catalog, OpenAPI), the operator (Job
 * template, deadline) and the runners need to know. Each lives in runners/<slug>/utility.ts and
 * is listed once in runners/catalog.ts.
 */
export interface UtilityDefinition {
  slug: string
  name: string
  description: string
  /** Groups utilities in the catalog: `pdf`, `image`, `archive` or `spreadsheet`. */
  category: string
  /** A short icon name (Material Symbols) a UI may show. */
  icon: string
  /** The output format a run produces (`pdf`, `image`, `zip`, `files`, `xlsx`; `none`: its facts are its result). */
  target: string
  /** Hard time limit, enforced as the Job's activeDeadlineSeconds. */
  maxDurationSeconds: number
  inputSchema: TSchema
  exampleInput: Record<string, unknown>
  enabled: boolean
  /** Checks beyond the schema, run after the schema passed. Paths are relative to `input`. */
  checkInput?: (input: unknown) => InputProblem[]
  runner: {
    /** Image repository name, without registry and tag. */
    image: string
    /** Program inside the image, run with node: the runner's bundle (runners/bundle-runners.ts). */
    entry: string
    /**
     * What the runner counts while it works (pages split, entries extracted, files zipped): it
     * reports progress in this unit and the job shows it while running. None: no progress.
     */
    progressUnit?: ProgressUnit
    /** Packages the runner loads by name at run time (a dynamic import, a worker's require): left out of its bundle. */
    external?: string[]
    /** V8 heap cap, kept below the memory limit so overruns fail as classified errors. */
    maxHeapMb: number
    /** Further node flags (e.g. a small young generation for a tight memory bound). */
    nodeFlags?: string[]
    resources: RunnerResources
    /** Crash retries before the job fails as upstream_error. */
    backoffLimit: number
    /** Jobs of this utility running at once by default (admission; DUTIL_UTILITY_CONCURRENCY overrides). */
    concurrency: number
    /**
     * Size of the scratch space (an emptyDir on /tmp; the root filesystem is read-only), for
     * runners that spool input to disk or run a browser. None when absent.
     */
    scratchSizeLimit?: string
    /**
     * The runner starts a browser (Chromium) whose own sandbox the platform team may turn on
     * (`browserSandbox` in DUTIL_RUNNER_POD; docs/adr/0031-chromium-sandbox.md).
     */
    browser?: boolean
  }
}

/** Pool mode's program (docs/adr/0026-runner-pools.md): pool.js beside the runner's main.js, in every runner. */
export function poolEntryOf(u: Pick<UtilityDefinition, 'runner'>): string {
  return u.runner.entry.replace(/main\.js$/, 'pool.js')
}
