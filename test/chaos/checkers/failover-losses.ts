/**
 * Acknowledged, then lost, across failovers (docs/decisions/0226). Under synchronous replication
 * a promotion loses nothing that was acknowledged, so in a `--failover sync` run every
 * acknowledgement the database no longer shows stays a violation, as on one server. Under
 * asynchronous replication a commit is acknowledged before the standby has it, so a failover
 * (the primary killed) loses the last ones; that is the mode's documented cost, not a bug of
 * leasehold. Those are counted and explained here, each with the failover it fell in, instead of
 * being reported as violations:
 *
 * - only violations whose checker marked them as a lost acknowledgement (`ackedAt`: the thing
 *   acknowledged is absent from the database, or is its direct consequence: a schedule slot run
 *   again after its first run's row vanished, a completion whose effect vanished too);
 * - only in an asynchronous run, and only for an unplanned failover: a switchover stops the old
 *   primary cleanly, which sends the standby everything first, so a loss there stays a violation;
 * - only when the acknowledgement came after the previous promotion (on the primary that was then
 *   killed), no later than one second after the harness began the failover (the kill follows
 *   within a REST call, and an answer may already be on its way back through the proxies), and no earlier than the standby can have been behind:
 *   one second before replication was held back, for a failover during standby-lag, or five
 *   seconds before the failover began otherwise (streaming on one machine keeps the standby milliseconds
 *   behind; five seconds leaves room for a starved machine). An older loss stays a violation.
 *
 * Token order and overlap never carry `ackedAt`: they must hold in both modes, which is what the
 * epoch in the tokens and the quarantine after a new epoch are for.
 */
import type { ExplainedLoss, History, PromotionRecord, Violation } from '../history.js';

/** How long after the failover began an acknowledgement may still have come from the killed primary. */
const IN_FLIGHT_MS = 1_000;
/** How far behind an unheld standby may be, and how far before a hold it may already have been. */
const STREAMING_BEHIND_MS = 5_000;
const BEHIND_AT_HOLD_MS = 1_000;

export interface LossVerdict {
  violations: Violation[];
  losses: ExplainedLoss[];
}

export function explainFailoverLosses(history: History, violations: Violation[]): LossVerdict {
  if (history.replication !== 'async') return { violations, losses: [] };
  const promotions = promotionsOf(history);
  const kept: Violation[] = [];
  const losses: ExplainedLoss[] = [];
  for (const violation of violations) {
    const index =
      violation.ackedAt === undefined ? -1 : promotionLosing(promotions, violation.ackedAt);
    const promotion = promotions[index];
    if (!promotion || promotion.kind !== 'failover') {
      kept.push(violation);
      continue;
    }
    const before = Math.round(promotion.at - violation.ackedAt!);
    losses.push({
      violation,
      failover: index + 1,
      explanation:
        `acknowledged ${before >= 0 ? `${before} ms before` : `${-before} ms after`} the failover of ${promotion.from} began ` +
        `(failover ${index + 1} to ${promotion.to}, timeline ${promotion.timeline}` +
        `${promotion.duringLag ? ', replication held back by standby-lag' : ''}): ` +
        'asynchronous replication had not sent it to the standby that was promoted',
    });
  }
  return { violations: kept, losses };
}

/** The promotion an acknowledgement at `ackedAt` can have been lost in, or -1. */
function promotionLosing(promotions: readonly PromotionRecord[], ackedAt: number): number {
  for (const [i, p] of promotions.entries()) {
    const previous = promotions[i - 1];
    if (previous && ackedAt <= previous.at) continue;
    if (ackedAt > p.at + IN_FLIGHT_MS) continue;
    const behindSince =
      p.heldSince !== undefined ? p.heldSince - BEHIND_AT_HOLD_MS : p.at - STREAMING_BEHIND_MS;
    return ackedAt >= behindSince ? i : -1;
  }
  return -1;
}

/**
 * Whether an acknowledgement at `ackedAt` falls where an asynchronous failover of this run can
 * have lost it (the same window as above). Always false outside an asynchronous failover run.
 */
export function lossWindowOf(history: History): (ackedAt: number) => boolean {
  if (history.replication !== 'async') return () => false;
  const promotions = promotionsOf(history);
  return (ackedAt) => promotions[promotionLosing(promotions, ackedAt)]?.kind === 'failover';
}

/** The run's promotions, in time order. */
function promotionsOf(history: History): PromotionRecord[] {
  return history.faults
    .map((f) => f.promotion)
    .filter((p): p is PromotionRecord => p !== undefined)
    .sort((a, b) => a.at - b.at);
}
