/**
 * Leaders and schedules as the service shows them, read for the routes (routes/leaders.ts) and
 * for the dashboard's snapshot alike. Elections are lease-lock rows named
 * `leasehold:election:<name>`, so "who leads" is the latest term of each such row; a schedule is
 * described by its newest claimed slot, which also carries the slot its claimant expected next
 * (decision 0301).
 */
import type { Lease } from '../core/types.js';
import type { LeaseholdFacade } from '../leasehold.js';
import type { ScheduleSummary } from '../leasehold-options.js';
import { ELECTION_LOCK_PREFIX } from '../locks/election-options.js';

export type LeaderJson = ReturnType<typeof leaderJson>;
export type ScheduleJson = ReturnType<typeof scheduleJson>;

/** One election's latest term; `state` is `active` while its leader holds it. */
export function leaderJson(term: Lease) {
  return {
    election: term.resource.slice(ELECTION_LOCK_PREFIX.length),
    instanceId: term.holder,
    token: term.token,
    electedAt: term.acquiredAt.toISOString(),
    expiresAt: term.expiresAt.toISOString(),
    state: term.state,
  };
}

export function scheduleJson(summary: ScheduleSummary) {
  return {
    name: summary.name,
    lastSlot: summary.lastSlot.toISOString(),
    holder: summary.holder,
    token: summary.token,
    claimedAt: summary.claimedAt.toISOString(),
    nextSlot: summary.nextSlot?.toISOString() ?? null,
    runs: summary.runs,
  };
}

export async function readLeaders(lh: LeaseholdFacade, limit: number): Promise<LeaderJson[]> {
  const terms = await lh.locks.listLeaseLocks({ prefix: ELECTION_LOCK_PREFIX, limit });
  return terms.map(leaderJson);
}

export async function readSchedules(lh: LeaseholdFacade, limit: number): Promise<ScheduleJson[]> {
  return (await lh.listSchedules({ limit })).map(scheduleJson);
}
