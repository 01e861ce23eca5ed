import { utcDay } from './time.js'

/** Storage key of an output file: `<utility>/<YYYY-MM-DD>/<job_id>/<file>` (day of job creation, UTC). */
export function outputKey(utility: string, createdAtMs: number, jobId: string, file: string): string {
  return `${utility}/${utcDay(createdAtMs)}/${jobId}/${file}`
}
