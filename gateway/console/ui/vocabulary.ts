/**
 * The contract's words the console's filters offer: the utilities and the job states. The
 * browser code cannot import contract/ (its own build); gateway/console/ui-vocabulary.test.ts holds these equal to
 * contract/utility.ts CONTRACT_SLUGS and contract/crd-schemas.ts JOB_STATES and TERMINAL_STATES.
 */
export const UTILITY_SLUGS: readonly string[] = [
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
]
export const JOB_STATES: readonly string[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled']
/** The states a job ends in: nothing changes after them. */
export const TERMINAL_STATES: readonly string[] = ['succeeded', 'failed', 'cancelled']
export const isTerminal = (status: string): boolean => TERMINAL_STATES.includes(status)
