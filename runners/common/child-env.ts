/**
 * The environment for a program a runner starts (a browser, LibreOffice): only the variables
 * named, never the runner's own (its storage credentials, a pool's token). What the program
 * finds in its environment is then all it could leak.
 */
export function allowedEnv(names: readonly string[], env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(names.filter((k) => env[k] !== undefined).map((k) => [k, env[k]]))
}
