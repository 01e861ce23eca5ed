/** A command used wrongly (exit code 2): the message says what to change. */
export class UsageError extends Error {}
