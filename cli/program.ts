import { Command, InvalidArgumentError, Option } from 'commander'
import { EXPIRY_DAYS } from '../contract/api-keys.js'
import { JOB_STATES } from '../contract/crd-schemas.js'
import { CONTRACT_SLUGS } from '../contract/utility.js'
import {
  cancelJob,
  clientFor,
  deleteFile,
  getJob,
  listFiles,
  listJobs,
  runUtility,
  uploadFile,
  waitJob,
  type RunOptions,
} from './api-commands.js'
import { redeliver } from './callback-commands.js'
import { complete, completionScript, SHELLS, type Shell } from './completion.js'
import {
  activeContext,
  apiSettings,
  type CliConfig,
  configPath,
  deleteContext,
  readConfig,
  redacted,
  setContext,
  useContext,
  writeConfig,
} from './config-file.js'
import { createAdmin } from './console-admin.js'
import { createKey, listKeys, revokeKey, signingSecret, type CreateOptions } from './key-commands.js'
import { kubeTarget, type KubeFlags } from './kube-target.js'
import { OUTPUT_FORMATS, renderList, renderOne, type OutputFormat } from './output.js'

/** The key lifetimes the API allows, as the flag takes them. */
const EXPIRY_CHOICES = EXPIRY_DAYS.map(String)

/** What a command's action gives back: an exit code, or text to print (exit 0). */
type Outcome = number | string

export interface ProgramIo {
  out: (text: string) => void
}

const EXIT_CODES = `Exit codes: 0 done (the job succeeded), 1 the job failed or was cancelled, 2 usage,
3 refused by the API (its error envelope), 4 API unreachable, 5 --timeout passed while waiting.`

const ENVIRONMENT = `The API: DUTIL_URL and DUTIL_API_KEY, else the current context of the config file
(${'$'}XDG_CONFIG_HOME/dutil/config.yaml; dutil config --help); DUTIL_CONTEXT picks another context.
The cluster (keys, admin, callbacks): --kubeconfig, KUBECONFIG, the context's kubeconfig,
~/.kube/config, else the pod's service account; namespace -n, DUTIL_NAMESPACE, the context's, dutil.`

/** The overview `dutil --help` ends with: every command on one line. */
const OVERVIEW = `
Commands at a glance:
  run UTILITY (--url URL ... | --input JSON | --input-file FILE) [--metadata JSON] [--wait] [--out DIR] [--timeout S] [-o FORMAT]
  jobs list [--utility U] [--status S] [--limit N] [-o table|wide|json|yaml]
  jobs get|wait|cancel JOB_ID [-o FORMAT]
  keys create --name NAME [--utilities a,b] [--rate-limit N] [--owner NAME] [--expires-in-days 30|90|365] [-o json|yaml]
  keys list | revoke KEY_ID | rotate-secret KEY_ID | reveal-secret KEY_ID
  admin create --email EMAIL [--url URL]    a one-time sign-in link for a console admin (the first admin is made this way)
  callbacks redeliver JOB_ID                sends a finished job's callback again (same webhook-id)
  config set-context NAME [--url URL] [--api-key KEY] [--kubeconfig PATH] [--kube-context CTX] [-n NS]
  config use-context NAME | get-contexts | current-context | delete-context NAME | view
  completion bash|zsh|fish

${ENVIRONMENT}

${EXIT_CODES}`

function outputOption(formats: readonly OutputFormat[] = OUTPUT_FORMATS): Option {
  return new Option('-o, --output <format>', 'output format').choices(formats).default('table')
}

/** -o, with --json kept as its older spelling of `-o json`. */
function formatOf(o: { output?: OutputFormat; json?: boolean }): OutputFormat {
  return o.json ? 'json' : (o.output ?? 'table')
}

function withOutput(cmd: Command, formats?: readonly OutputFormat[]): Command {
  return cmd.addOption(outputOption(formats)).addOption(new Option('--json', 'the same as -o json').hideHelp())
}

/** -v: the API commands print each HTTP request and its answer on stderr. */
function withVerbose(cmd: Command): Command {
  return cmd.option('-v, --verbose', 'print each HTTP request and its answer (status, time, request id) on stderr')
}

/** A command of the API: -o and -v. */
function apiCommand(cmd: Command): Command {
  return withVerbose(withOutput(cmd))
}

function withKube(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <path>', 'kubeconfig file (default: KUBECONFIG, the context’s, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context to use')
    .option('-n, --namespace <namespace>', 'namespace dutil is installed in (default: dutil)')
}

/**
 * The command tree. `config` is read lazily (only commands that need it read the file), so a
 * malformed file never stops `--help`, `completion` or `config set-context` from fixing it.
 */
export function buildProgram(version: string, io: ProgramIo, exit: (code: number) => void): Command {
  let loaded: CliConfig | undefined
  const path = () => configPath()
  const config = () => (loaded ??= readConfig(path()))
  const done = (outcome: Outcome) => {
    if (typeof outcome === 'string') io.out(outcome)
    else exit(outcome)
  }
  const api = (o: { verbose?: boolean }) =>
    clientFor(apiSettings(activeContext(config())), o.verbose ? { verbose: (line) => process.stderr.write(line) } : {})
  const kube = (flags: KubeFlags) => kubeTarget(flags, activeContext(config()))

  const program = new Command('dutil')
    // Errors reach the caller (cli/main.ts maps them to exit codes); set first, so every subcommand inherits it.
    .exitOverride()
    .description('dutil: run document utilities as jobs, and manage their API keys')
    .version(`dutil ${version}`, '--version', 'print the version')
    .showSuggestionAfterError(true)
    .enablePositionalOptions()
    .addHelpText('after', OVERVIEW)

  apiCommand(
    program
      .command('run')
      .description('start a job; --wait follows it to the end (progress on stderr), --out downloads its files')
      .addArgument(program.createArgument('<utility>', 'the utility').choices(CONTRACT_SLUGS))
      .argument('[files...]', 'local files to upload as the input (a URL given here stays a URL)')
      .option('--url <url...>', 'the input URL (several for zip-files and merge-pdf, in order)')
      .option('--input <json>', 'the whole input as JSON; beside local files, the rest of it (its options)')
      .option(
        '--input-file <file>',
        'the input as a JSON file; beside local files, the rest of it (a password kept off the command line)',
      )
      .option('--metadata <json>', 'metadata stored on the job')
      .option('--callback-url <url>', 'https:// URL to POST the signed result to')
      .option('--wait', 'follow the job to its end')
      .option('--out <dir>', 'download the files into DIR (implies --wait)')
      .option('--timeout <seconds>', 'stop waiting after this long (exit 5; the job goes on)'),
  ).action(
    async (
      utility: string,
      files: string[],
      o: RunOptions & { output?: OutputFormat; json?: boolean; verbose?: boolean },
    ) => done(await runUtility(api(o), utility, { ...o, files }, formatOf(o))),
  )

  const jobs = program.command('jobs').description("this key's jobs")
  apiCommand(
    jobs
      .command('list')
      .description('the newest jobs first')
      .addOption(new Option('--utility <utility>', 'only this utility').choices(CONTRACT_SLUGS))
      .addOption(new Option('--status <status>', 'only jobs in this state').choices(JOB_STATES))
      .option('--limit <n>', 'at most N jobs (default 25)'),
  ).action(async (o) => done(await listJobs(api(o), o, formatOf(o))))
  apiCommand(jobs.command('get').description('one job').argument('<job-id>')).action(async (id: string, o) =>
    done(await getJob(api(o), id, formatOf(o))),
  )
  apiCommand(
    jobs
      .command('wait')
      .description('follow a job to its end')
      .argument('<job-id>')
      .option('--out <dir>', 'download its files into DIR')
      .option('--timeout <seconds>', 'stop waiting after this long (exit 5)'),
  ).action(async (id: string, o) => done(await waitJob(api(o), id, o, formatOf(o))))
  apiCommand(jobs.command('cancel').description('cancel a queued job').argument('<job-id>')).action(
    async (id: string, o) => done(await cancelJob(api(o), id, formatOf(o))),
  )

  const uploads = program.command('files').description("this key's uploads: local files its jobs can name")
  apiCommand(
    uploads
      .command('upload')
      .description('upload a local file; prints the s3:// name a job input takes')
      .argument('<path>')
      .option('--name <name>', 'the name it goes by (default: the file name)')
      .option('--expires-in <seconds>', 'how long it is kept (default: a day)'),
  ).action(async (path: string, o) => done(await uploadFile(api(o), path, o, formatOf(o))))
  apiCommand(uploads.command('list').description('unexpired uploads, newest first')).action(async (o) =>
    done(await listFiles(api(o), formatOf(o))),
  )
  apiCommand(uploads.command('delete').description('delete an upload now').argument('<file-id>')).action(
    async (id: string, o) => done(await deleteFile(api(o), id)),
  )

  const keys = program.command('keys').description('API keys (through the Kubernetes API)')
  withOutput(
    withKube(
      keys
        .command('create')
        .description('a new API key, shown only once')
        .requiredOption('--name <name>', 'where the key runs, e.g. laptop')
        .option('--utilities <list>', 'comma-separated utilities the key may call (default: all)')
        .option('--rate-limit <n>', 'requests per minute (default DUTIL_DEFAULT_RATE_LIMIT, else 600)')
        .option(
          '--owner <name>',
          "whom its jobs count against for fair shares and queued ceilings, with the owner's other keys (a person's e-mail, or an application's name; default: the key alone)",
        )
        .addOption(
          new Option('--expires-in-days <days>', 'lifetime (default: never)').choices(EXPIRY_CHOICES).argParser((v) => {
            if (!EXPIRY_CHOICES.includes(v))
              throw new InvalidArgumentError('It must be 30, 90 or 365 (omit it for a key that never expires).')
            return v
          }),
        ),
    ),
  ).action(async (o: CreateOptions & KubeFlags & { output?: OutputFormat; json?: boolean }) =>
    done(await createKey(kube(o), o, formatOf(o))),
  )
  withOutput(withKube(keys.command('list').description('every key, revoked ones last'))).action(async (o) =>
    done(await listKeys(kube(o), formatOf(o))),
  )
  withKube(
    keys.command('revoke').description('revoke a key at once (its queued jobs are cancelled)').argument('<key-id>'),
  ).action(async (id: string, o: KubeFlags) => done(await revokeKey(kube(o), id)))
  withOutput(
    withKube(
      keys
        .command('rotate-secret')
        .description('a new callback signing secret, used from the next attempt on')
        .argument('<key-id>'),
    ),
  ).action(async (id: string, o) => done(await signingSecret(kube(o), id, true, formatOf(o))))
  withOutput(
    withKube(
      keys.command('reveal-secret').description("the secret this key's callbacks are signed with").argument('<key-id>'),
    ),
  ).action(async (id: string, o) => done(await signingSecret(kube(o), id, false, formatOf(o))))

  const admin = program.command('admin').description("the console's administrators")
  withOutput(
    withKube(
      admin
        .command('create')
        .description('a one-time sign-in link (valid 7 days) for a console admin; no e-mail is sent')
        .requiredOption('--email <email>', "the admin's e-mail address")
        .option('--url <url>', 'the console’s public URL (default DUTIL_PUBLIC_URL)'),
    ),
  ).action(async (o) => done(await createAdmin(kube(o), o, formatOf(o))))

  const callbacks = program.command('callbacks').description('callback deliveries')
  withKube(
    callbacks
      .command('redeliver')
      .description("send a finished job's callback again (same webhook-id)")
      .argument('<job-id>'),
  ).action(async (id: string, o: KubeFlags) => done(await redeliver(kube(o), id)))

  const cfg = program
    .command('config')
    .description('contexts: which API and key, and which cluster, the other commands use')
    .addHelpText('after', `\nThe file: ${'$'}DUTIL_CONFIG, else ${'$'}XDG_CONFIG_HOME/dutil/config.yaml (mode 0600).`)
  cfg
    .command('set-context')
    .description('add a context or change its fields (an empty value removes one); the first becomes current')
    .argument('<name>')
    .option('--url <url>', "the gateway's URL")
    .option('--api-key <key>', 'the API key (du_live_...)')
    .option('--kubeconfig <path>', 'kubeconfig for keys, admin and callbacks')
    .option('--kube-context <name>', 'context of that kubeconfig')
    .option('-n, --namespace <namespace>', 'namespace dutil is installed in')
    .action(
      (
        name: string,
        o: { url?: string; apiKey?: string; kubeconfig?: string; kubeContext?: string; namespace?: string },
      ) => {
        let next = setContext(config(), name, o)
        if (!next.currentContext) next = useContext(next, name)
        writeConfig(path(), next)
        done(`Context ${name} saved in ${path()}${next.currentContext === name ? ' (current)' : ''}.`)
      },
    )
  cfg
    .command('use-context')
    .description('make a context the current one')
    .argument('<name>')
    .action((name: string) => {
      writeConfig(path(), useContext(config(), name))
      done(`Switched to context ${name}.`)
    })
  cfg
    .command('delete-context')
    .description('remove a context')
    .argument('<name>')
    .action((name: string) => {
      writeConfig(path(), deleteContext(config(), name))
      done(`Context ${name} deleted.`)
    })
  cfg
    .command('current-context')
    .description('the current context')
    .action(() => {
      const c = config().currentContext
      if (!c) return done(`no current context (${path()}); dutil config use-context NAME`)
      done(c)
    })
  withOutput(cfg.command('get-contexts').description('every context')).action((o) => {
    const c = config()
    done(
      renderList(
        formatOf(o),
        c.contexts,
        [
          { header: 'CURRENT', value: (x) => (x.name === c.currentContext ? '*' : ' ') },
          { header: 'NAME', value: (x) => x.name },
          { header: 'URL', value: (x) => x.url },
          { header: 'NAMESPACE', value: (x) => x.namespace },
          { header: 'KUBECONFIG', value: (x) => x.kubeconfig, wide: true },
          { header: 'KUBE-CONTEXT', value: (x) => x.kubeContext, wide: true },
        ],
        redacted,
      ),
    )
  })
  withOutput(cfg.command('view').description('the config, API keys shortened to their prefix'), [
    'yaml',
    'json',
  ]).action((o) => {
    const c = config()
    const shown = { currentContext: c.currentContext ?? null, contexts: c.contexts.map(redacted) }
    const format = formatOf(o)
    done(renderOne(format === 'table' ? 'yaml' : format, shown, () => ''))
  })

  program
    .command('completion')
    .description('the shell completion script: source <(dutil completion bash)')
    .addArgument(program.createArgument('<shell>').choices(SHELLS))
    .action((shell: Shell) => done(completionScript(shell).trimEnd()))

  program
    .command('__complete', { hidden: true })
    .argument('[words...]')
    .allowUnknownOption()
    .passThroughOptions()
    .helpOption(false)
    .action((words: string[]) => {
      // Context names for `config use-context NAME` and its kin; files are the shell's own.
      const candidates = complete(program, words.length ? words : [''], (name, cmd) => {
        if (name !== 'name' || cmd.parent?.name() !== 'config') return []
        try {
          return config().contexts.map((c) => c.name)
        } catch {
          return []
        }
      })
      if (candidates.length) done(candidates.join('\n'))
    })

  return program
}
