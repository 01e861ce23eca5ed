import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import type { Program } from '../platform/program.js'
import type { LeaderElectionSettings } from './config.js'
import { LeaderElector } from './leader-election.js'

/** The replica's candidate for the lease, or none when leader election is off (one replica). */
export function leaderElector(
  kc: KubeConfig,
  namespace: string,
  election: LeaderElectionSettings,
  log: Logger,
): LeaderElector | undefined {
  if (!election.enabled) return undefined
  return new LeaderElector({
    api: kc.makeApiClient(CoordinationV1Api),
    namespace,
    leaseName: election.leaseName,
    identity: election.identity,
    leaseDurationMs: election.leaseDurationMs,
    renewDeadlineMs: (election.leaseDurationMs * 2) / 3,
    retryPeriodMs: election.leaseDurationMs / 7.5,
    log: log.child({ component: 'leader-election' }),
  })
}

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
