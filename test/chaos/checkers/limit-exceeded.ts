/**
 * Checker: a queue's flow-control limits (decision 0239) are never exceeded by job runs that are
 * still valid. A run is one claim of a job (job id and generation); it is in flight on the
 * database clock from its claimedAt until the earlier of its outcome and its last known lease
 * expiry (the claim's, or the latest a granted renewal answered). A worker paused past its lease
 * no longer counts once the lease expired: whatever it does later, the fence refuses it.
 *
 * - concurrency N: at no instant more than N runs of the queue in flight;
 * - perKeyConcurrency N: at no instant more than N runs of one partition key of the queue;
 * - rate { limit, per }: no window (t - per, t] holds more than `limit` claim instants (the
 *   claim's own rule, claim-limits-sql.ts).
 *
 * A run counts in flight from its claim's commit at the latest (see JobRun) and for the rate
 * from its claimedAt. Intervals are half-open: a run that ended at t and one claimed at t do not overlap (the
 * database's instants come to the history in whole milliseconds).
 *
 * The outcome's instant: a completion's is the database clock read in the completing
 * transaction before its COMMIT (the slot is freed at that COMMIT, later). A failure or a
 * hand-back is only known on the wall clock, when it was sent: converted to the database clock
 * with the offset measured at the start, less a slack for that estimate. Every end is thus an
 * instant the run surely had not ended yet or earlier, and what the history does not know (a
 * claim or a renewal whose answer was lost) is left out: the checker can miss an excess, never
 * invent one.
 */
import type { ChildEvent, History, QueueLimits, Violation } from '../history.js';

/** Wall time of a send on the database clock: less this, for the offset's estimate (terms.ts). */
const SENT_SLACK_MS = 50;

/**
 * One claim of a job, in flight on the database clock over [dbStart, dbEnd). `dbClaimedAt` is
 * the claim statement's `now()`, its start: what the rate's window counts (the claim writes that
 * instant to `queues.starts`). A claim that waited on a row of a finishing transaction (a slot
 * freed by a completion not yet committed) took its slot only after that commit, so the run is
 * counted in flight from the latest instant the claim can have committed: its answer's arrival
 * (wall, converted with the offset, plus the slack), when that is later.
 */
export interface JobRun {
  queue: string;
  jobId: number;
  generation: number;
  worker: string;
  proc: string;
  partitionKey: string | null;
  dbClaimedAt: number;
  dbStart: number;
  dbEnd: number;
  /** What ended it: its outcome (completion read on the database clock, or a send) or its lease. */
  endedBy: 'completion' | 'outcome-sent' | 'lease-expiry';
}

const runKey = (jobId: number, generation: number): string => `${jobId}|${generation}`;

/** The job runs the history knows, in claim order. */
export function jobRuns(events: readonly ChildEvent[], dbClockOffsetMs = 0): JobRun[] {
  const runs = new Map<
    string,
    JobRun & { expiry: number; completedAt?: number; sentAt?: number }
  >();
  for (const e of events)
    if (e.type === 'job-claim')
      runs.set(runKey(e.jobId, e.generation), {
        queue: e.queue,
        jobId: e.jobId,
        generation: e.generation,
        worker: e.worker,
        proc: e.proc,
        partitionKey: e.partitionKey,
        dbClaimedAt: e.dbClaimedAt,
        dbStart: Math.max(e.dbClaimedAt, e.t + dbClockOffsetMs + SENT_SLACK_MS),
        dbEnd: e.dbLeaseExpiresAt,
        endedBy: 'lease-expiry',
        expiry: e.dbLeaseExpiresAt,
      });
  for (const e of events) {
    if (e.type !== 'job-renew' && e.type !== 'job' && e.type !== 'job-outcome-invoke') continue;
    const run = runs.get(runKey(e.jobId, e.generation));
    if (!run) continue;
    if (e.type === 'job-renew') run.expiry = Math.max(run.expiry, e.dbLeaseExpiresAt);
    else if (e.type === 'job') {
      if (e.phase === 'complete-ok' && e.dbAt !== undefined)
        run.completedAt = Math.min(run.completedAt ?? Infinity, e.dbAt);
    } else {
      const sentAt = Math.max(run.dbClaimedAt, e.t + dbClockOffsetMs - SENT_SLACK_MS);
      run.sentAt = Math.min(run.sentAt ?? Infinity, sentAt);
    }
  }
  return [...runs.values()]
    .map(({ expiry, completedAt, sentAt, ...run }): JobRun => {
      // A completion read on the database clock says when it ended; otherwise the first
      // outcome sent (the completion's own send, when its answer never came, included).
      const outcome = completedAt ?? sentAt;
      const [dbEnd, endedBy]: [number, JobRun['endedBy']] =
        outcome !== undefined && outcome < expiry
          ? [outcome, completedAt !== undefined ? 'completion' : 'outcome-sent']
          : [expiry, 'lease-expiry'];
      return { ...run, dbEnd, endedBy };
    })
    .sort((a, b) => a.dbClaimedAt - b.dbClaimedAt || a.jobId - b.jobId);
}

/** What the sweep found for one limited queue: the most in flight and the most starts in a window. */
export interface LimitPeaks {
  queue: string;
  runs: number;
  peakInFlight: number;
  peakPerKey: number;
  peakInWindow: number;
}

interface Excess {
  at: number;
  runs: JobRun[];
}

/**
 * Sweeps runs over time (ends before starts at one instant): the peak of runs in flight, and
 * each moment the count rose above `cap` (one per stretch above it, at the run that crossed it).
 */
function sweep(runs: readonly JobRun[], cap: number | null): { peak: number; excess: Excess[] } {
  const edges = runs
    .filter((r) => r.dbEnd > r.dbStart)
    .flatMap((r) => [
      { at: r.dbStart, delta: 1, run: r },
      { at: r.dbEnd, delta: -1, run: r },
    ])
    .sort((a, b) => a.at - b.at || a.delta - b.delta);
  const active = new Set<JobRun>();
  let peak = 0;
  let above = false;
  const excess: Excess[] = [];
  for (const edge of edges) {
    if (edge.delta < 0) active.delete(edge.run);
    else active.add(edge.run);
    peak = Math.max(peak, active.size);
    if (cap === null) continue;
    if (active.size > cap && !above) excess.push({ at: edge.at, runs: [...active] });
    above = active.size > cap;
  }
  return { peak, excess };
}

/** Claim instants that break the window: each stretch of windows with more than `limit`. */
function rateExcess(
  runs: readonly JobRun[],
  rate: { limit: number; per: number } | null,
): { peak: number; excess: Excess[] } {
  const claims = [...runs].sort((a, b) => a.dbClaimedAt - b.dbClaimedAt);
  let peak = 0;
  let from = 0;
  let above = false;
  const excess: Excess[] = [];
  for (let j = 0; j < claims.length; j++) {
    // The window (t - per, t] of claim j, t its instant: claims from..j.
    const t = claims[j]!.dbClaimedAt;
    const per = rate?.per ?? Infinity;
    while (claims[from]!.dbClaimedAt <= t - per) from++;
    // Claims at the same instant as j after it are in its window too.
    let to = j;
    while (to + 1 < claims.length && claims[to + 1]!.dbClaimedAt === t) to++;
    const inWindow = to - from + 1;
    if (rate) peak = Math.max(peak, inWindow);
    if (!rate) continue;
    if (inWindow > rate.limit && !above) excess.push({ at: t, runs: claims.slice(from, to + 1) });
    above = inWindow > rate.limit;
  }
  return { peak, excess };
}

function named(runs: readonly JobRun[]): string {
  return runs
    .map((r) => `job ${r.jobId}#${r.generation} by ${r.worker}`)
    .slice(0, 8)
    .join(', ');
}

function judge(history: History): { peaks: LimitPeaks[]; violations: Violation[] } {
  const runs = jobRuns(history.events, history.bounds.dbClockOffsetMs);
  const violations: Violation[] = [];
  const peaks: LimitPeaks[] = [];
  const at = (ms: number): string => new Date(ms).toISOString();
  const evidence = (limits: QueueLimits, e: Excess) => ({
    queue: limits.queue,
    at: e.at,
    runs: e.runs.map((r) => ({
      jobId: r.jobId,
      generation: r.generation,
      worker: r.worker,
      partitionKey: r.partitionKey,
      dbClaimedAt: r.dbClaimedAt,
      dbStart: r.dbStart,
      dbEnd: r.dbEnd,
      endedBy: r.endedBy,
    })),
  });
  for (const limits of history.limits ?? []) {
    const ofQueue = runs.filter((r) => r.queue === limits.queue);
    const all = sweep(ofQueue, limits.concurrency);
    for (const e of all.excess)
      violations.push({
        kind: 'limit-exceeded',
        message: `${limits.queue}: ${e.runs.length} runs in flight at ${at(e.at)}, concurrency ${limits.concurrency}: ${named(e.runs)}`,
        evidence: evidence(limits, e),
      });
    let peakPerKey = 0;
    const byKey = new Map<string, JobRun[]>();
    for (const r of ofQueue)
      if (r.partitionKey !== null)
        byKey.set(r.partitionKey, [...(byKey.get(r.partitionKey) ?? []), r]);
    for (const [key, keyed] of byKey) {
      const swept = sweep(keyed, limits.perKeyConcurrency);
      peakPerKey = Math.max(peakPerKey, swept.peak);
      for (const e of swept.excess)
        violations.push({
          kind: 'limit-exceeded',
          message: `${limits.queue} key ${key}: ${e.runs.length} runs in flight at ${at(e.at)}, perKeyConcurrency ${limits.perKeyConcurrency}: ${named(e.runs)}`,
          evidence: evidence(limits, e),
        });
    }
    const rate = rateExcess(ofQueue, limits.rate);
    for (const e of rate.excess)
      violations.push({
        kind: 'limit-exceeded',
        message: `${limits.queue}: ${e.runs.length} claims in the ${limits.rate!.per} ms up to ${at(e.at)}, rate limit ${limits.rate!.limit}: ${named(e.runs)}`,
        evidence: evidence(limits, e),
      });
    peaks.push({
      queue: limits.queue,
      runs: ofQueue.length,
      peakInFlight: all.peak,
      peakPerKey,
      peakInWindow: rate.peak,
    });
  }
  return { peaks, violations };
}

export function checkLimitExceeded(history: History): Violation[] {
  return judge(history).violations;
}

/** The peaks of each limited queue of the run, for the report. */
export function limitPeaks(history: History): LimitPeaks[] {
  return judge(history).peaks;
}

/**
 * The report's line for this checker: each limited queue with its limit and the peak the sweep
 * saw against it, and the violations.
 */
export function limitsLine(history: History): string {
  const limits = new Map((history.limits ?? []).map((l) => [l.queue, l]));
  const { peaks, violations } = judge(history);
  if (peaks.length === 0) return 'limits: no limited queue in this run';
  const parts = peaks.map((p) => {
    const l = limits.get(p.queue)!;
    const shown = [
      l.concurrency !== null ? `in flight ${p.peakInFlight}/${l.concurrency}` : '',
      l.perKeyConcurrency !== null && p.peakPerKey > 0
        ? `per key ${p.peakPerKey}/${l.perKeyConcurrency}`
        : '',
      l.rate ? `claims per ${l.rate.per} ms ${p.peakInWindow}/${l.rate.limit}` : '',
    ].filter(Boolean);
    return `${p.queue} ${p.runs} runs, peak ${shown.join(', ')}`;
  });
  return `limits: ${parts.join('; ')}; ${violations.length} limit-exceeded violations`;
}
