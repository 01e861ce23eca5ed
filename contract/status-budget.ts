import type { UtilityJobStatus } from './crd-schemas.js'

/**
 * The bytes of output-file entries a UtilityJob's status may carry. etcd refuses objects over
 * 1.5 MiB, and a status write that fails means a job that never finishes: 1,000 unzip entries
 * with long multi-byte paths come to ~1.7 MB. Files past the budget are left out of the status
 * (`result.filesOmitted` says how many); the job record holds them all, and every job view is
 * built from the record when files were left out.
 */
export const STATUS_FILES_BUDGET_BYTES = 256 * 1024

/** The status as the cluster keeps it: at most STATUS_FILES_BUDGET_BYTES of file entries. */
export function boundedStatus<S extends Pick<UtilityJobStatus, 'result'>>(
  status: S,
  budget = STATUS_FILES_BUDGET_BYTES,
): S {
  const files = status.result?.files
  if (!status.result || !files?.length) return status
  let used = 0
  let kept = 0
  for (const f of files) {
    used += Buffer.byteLength(JSON.stringify(f)) + 1
    if (used > budget) break
    kept++
  }
  if (kept === files.length) return status
  return { ...status, result: { ...status.result, files: files.slice(0, kept), filesOmitted: files.length - kept } }
}

/** Whether a status left files out (its full result is in the job record). */
export function hasOmittedFiles(status: Pick<UtilityJobStatus, 'result'> | undefined): boolean {
  return (status?.result?.filesOmitted ?? 0) > 0
}
