import type { Program } from '../platform/program.js'
import type { LeaderElector } from './leader-election.js'

/**
 * Leads when elected: at once without election; with it, once the lease is won, renewing it from
 * that moment (preparing the stores may take a while), then starting the leader-only work.
 * `onLost` runs when the lease is lost while leading: another replica may already be
 * reconciling, so the operator exits and starts again as a candidate.
 */
export async function leadWhenElected(
  program: Program,
  elector: Pick<LeaderElector, 'acquire' | 'holdUntilLost'> | undefined,
  prepare: () => Promise<void>,
  onLost: () => void,
): Promise<void> {
  if (elector) {
    if (!(await elector.acquire(program.signal))) return
    void elector.holdUntilLost(program.signal).then((outcome) => {
      if (outcome === 'lost') onLost()
    })
  }
  await prepare()
  program.lead()
}
