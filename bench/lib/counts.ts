/**
 * How much each scenario does, per profile. `standard` is the shape (20k jobs, 60 s of
 * sustained load); `full` drains 100k; `quick` runs everything small in under 3 minutes;
 * `tiny` only proves the code still runs (the test), with one round.
 */
export interface BenchCounts {
  /** Jobs pre-enqueued for each burn-down. */
  readonly burnDownJobs: number;
  /** A burn-down stops here (a default configuration may never finish); its rate is then capped. */
  readonly burnDownLimitSeconds: number;
  /** Jobs in the one bulk-enqueue call. */
  readonly bulkJobs: number;
  /** Single enqueues from 8 concurrent callers run this long. */
  readonly singleSeconds: number;
  /** Idle-latency samples per system and round. */
  readonly latencySamples: number;
  readonly sustainedSeconds: number;
  /** Each lease measurement (pairs, then renews) runs this long. */
  readonly leaseSeconds: number;
  /** Idle workers, spread over `herdProcesses` (equal: one worker per process, as deployed). */
  readonly herdWorkers: number;
  readonly herdProcesses: number;
  /** Time given to the idle workers to pass their staggered first polls before counting. */
  readonly herdSettleSeconds: number;
  readonly herdWindowSeconds: number;
  /** Pause/resume cycles per round of the flow-control family (each one job, timed from resume). */
  readonly resumeCycles: number;
  readonly defaultRepeat: number;
}

export type ProfileName = 'tiny' | 'quick' | 'standard' | 'full';

export const PROFILES: Record<ProfileName, BenchCounts> = {
  tiny: {
    burnDownJobs: 200,
    burnDownLimitSeconds: 1,
    bulkJobs: 200,
    singleSeconds: 0.3,
    latencySamples: 5,
    sustainedSeconds: 1,
    leaseSeconds: 0.3,
    herdWorkers: 2,
    herdProcesses: 2,
    herdSettleSeconds: 0.5,
    herdWindowSeconds: 2,
    resumeCycles: 3,
    defaultRepeat: 1,
  },
  quick: {
    burnDownJobs: 3_000,
    burnDownLimitSeconds: 2,
    bulkJobs: 3_000,
    singleSeconds: 0.5,
    latencySamples: 25,
    sustainedSeconds: 3,
    leaseSeconds: 0.5,
    herdWorkers: 10,
    herdProcesses: 10,
    herdSettleSeconds: 1.5,
    herdWindowSeconds: 3,
    resumeCycles: 10,
    defaultRepeat: 3,
  },
  standard: {
    burnDownJobs: 20_000,
    burnDownLimitSeconds: 20,
    bulkJobs: 20_000,
    singleSeconds: 5,
    latencySamples: 400,
    sustainedSeconds: 60,
    leaseSeconds: 5,
    herdWorkers: 50,
    herdProcesses: 50,
    herdSettleSeconds: 3,
    herdWindowSeconds: 20,
    resumeCycles: 50,
    defaultRepeat: 3,
  },
  full: {
    burnDownJobs: 100_000,
    burnDownLimitSeconds: 30,
    bulkJobs: 20_000,
    singleSeconds: 10,
    latencySamples: 600,
    sustainedSeconds: 60,
    leaseSeconds: 5,
    herdWorkers: 50,
    herdProcesses: 50,
    herdSettleSeconds: 3,
    herdWindowSeconds: 30,
    resumeCycles: 100,
    defaultRepeat: 3,
  },
};
