import type { Command, Option } from 'commander'

/**
 * Shell completion the way cobra (kubectl, gh) does it: the script each shell sources only asks
 * `dutil __complete WORDS…` for the candidates of the last word, so the command tree in
 * cli/program.ts is the one source, and values (utilities, states, contexts) are always current.
 */
export const SHELLS = ['bash', 'zsh', 'fish'] as const
export type Shell = (typeof SHELLS)[number]

/** Candidates for a value, by option or positional name. */
export type ValueSource = (name: string, command: Command) => readonly string[]

function findOption(cmd: Command, word: string): Option | undefined {
  const flag = word.split('=')[0]
  for (let c: Command | null = cmd; c; c = c.parent)
    for (const o of c.options) if (o.long === flag || o.short === flag) return o
  return undefined
}

const takesValue = (o: Option) => o.required || o.optional

/** The completions of the last word of `words` (the words after `dutil`, the last one being typed). */
export function complete(root: Command, words: readonly string[], values: ValueSource): string[] {
  let cmd = root
  let positional = 0
  const typed = words.slice(0, -1)
  const current = words.at(-1) ?? ''
  for (let i = 0; i < typed.length; i++) {
    const w = typed[i]
    if (w.startsWith('-')) {
      const o = findOption(cmd, w)
      if (o && takesValue(o) && !w.includes('=')) {
        if (i === typed.length - 1) return matching(optionValues(o, cmd, values), current)
        i++
      }
      continue
    }
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w))
    if (sub && positional === 0) cmd = sub
    else positional++
  }
  if (current.startsWith('-')) {
    const flags = []
    for (let c: Command | null = cmd; c; c = c.parent)
      for (const o of c.options) if (!o.hidden && o.long) flags.push(o.long)
    flags.push('--help')
    return matching([...new Set(flags)], current)
  }
  const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden).map((c) => c.name())
  const arg = cmd.registeredArguments[positional]
  const argValues = arg ? (arg.argChoices ?? values(arg.name(), cmd)) : []
  return matching(positional === 0 && subs.length ? subs : argValues, current)
}

function optionValues(o: Option, cmd: Command, values: ValueSource): readonly string[] {
  return o.argChoices ?? values(o.attributeName(), cmd)
}

function matching(list: readonly string[], prefix: string): string[] {
  return list.filter((c) => c.startsWith(prefix))
}

/** The script to source: `source <(dutil completion bash)`, or the files the help text names. */
export function completionScript(shell: Shell, bin = 'dutil'): string {
  if (shell === 'bash')
    return `# bash completion for ${bin}: source <(${bin} completion bash)
_${bin}() {
  local IFS=$'\\n'
  COMPREPLY=($(${bin} __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _${bin} ${bin}
`
  if (shell === 'zsh')
    return `#compdef ${bin}
# zsh completion for ${bin}: source <(${bin} completion zsh), after compinit
_${bin}() {
  local -a candidates
  candidates=("\${(@f)$(${bin} __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  if [[ -n "\${candidates[1]}" ]]; then compadd -a candidates; else _files; fi
}
compdef _${bin} ${bin}
`
  return `# fish completion for ${bin}: ${bin} completion fish > ~/.config/fish/completions/${bin}.fish
complete -c ${bin} -f -a '(${bin} __complete (commandline -opc)[2..-1] (commandline -ct))'
`
}
