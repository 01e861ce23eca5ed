// pino JSON logger for the node agent: fixed messages, details in fields.
import { pino } from 'pino'

export type Logger = pino.Logger

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name: 'node-agent', level })
}
