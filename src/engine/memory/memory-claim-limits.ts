/**
 * The claim rules of the memory engine that flow control adds (decision 0239), as pure
 * functions over the job records, mirroring claim-limits-sql.ts on PostgreSQL: which jobs their
 * partition lets run, how many a queue may start now, fair ordering by key, and the facts
 * `explain` decides from.
 */
import type { ExplainSources, QueueState } from './memory-queues.js';
import { dedupKey, isLive, type JobRecord } from './memory-job-record.js';

/**
 * Pending, available jobs of `queues` that their partition lets run. Under perKeyConcurrency N
 * (`perKeyOf`; 1 by default) a job may run when its partition's older unfinished jobs and
 * younger processing jobs number fewer than N; for N = 1 that is "the oldest unfinished job,
 * and nothing of its partition processing" (the younger test matters after an operator retries
 * an old job while a younger one runs). Without a cap (null) partitions do not matter.
 */
export function claimableJobs(
  jobs: Iterable<JobRecord>,
  queues: ReadonlySet<string>,
  now: Date,
  perKeyOf: (queue: string) => number | null,
): JobRecord[] {
  const inQueues = [...jobs].filter((r) => queues.has(r.queue) && isLive(r));
  const processing = new Map<string, number>();
  for (const r of inQueues)
    if (r.status === 'processing' && r.partitionKey !== null) {
      const partition = dedupKey(r.queue, r.partitionKey);
      processing.set(partition, (processing.get(partition) ?? 0) + 1);
    }
  const olderLive = new Map<string, number>();
  const olderProcessing = new Map<string, number>();
  const claimable: JobRecord[] = [];
  for (const r of inQueues) {
    const available = r.status === 'pending' && r.availableAt.getTime() <= now.getTime();
    if (r.partitionKey === null) {
      if (available) claimable.push(r);
      continue;
    }
    const perKey = perKeyOf(r.queue);
    const partition = dedupKey(r.queue, r.partitionKey);
    const older = olderLive.get(partition) ?? 0;
    const olderBusy = olderProcessing.get(partition) ?? 0;
    const youngerBusy = (processing.get(partition) ?? 0) - olderBusy;
    if (available && (perKey === null || older + youngerBusy < perKey)) claimable.push(r);
    olderLive.set(partition, older + 1);
    if (r.status === 'processing') olderProcessing.set(partition, olderBusy + 1);
  }
  return claimable;
}

/** Processing jobs of `queue`; an expired lease still counts until the rescuer takes it back. */
function processingIn(jobs: Iterable<JobRecord>, queue: string): number {
  let n = 0;
  for (const r of jobs) if (r.queue === queue && r.status === 'processing') n++;
  return n;
}

/**
 * How many jobs `queue` may start now under its settings (`state`, undefined for the
 * defaults): none when paused; its concurrency less its processing jobs; its rate's limit less
 * the starts inside the window (starts that left it are dropped here, as the SQL's claim does).
 */
export function roomOf(
  state: QueueState | undefined,
  jobs: Iterable<JobRecord>,
  queue: string,
  now: Date,
): number {
  if (!state) return Number.POSITIVE_INFINITY;
  const { settings } = state;
  if (settings.paused) return 0;
  let room = Number.POSITIVE_INFINITY;
  if (settings.concurrency !== null)
    room = Math.min(room, settings.concurrency - processingIn(jobs, queue));
  if (settings.rate) {
    const windowStart = now.getTime() - settings.rate.per;
    while (state.starts.length > 0 && state.starts[0]! <= windowStart) state.starts.shift();
    room = Math.min(room, settings.rate.limit - state.starts.length);
  }
  return room;
}

/**
 * fairness 'key': jobs (already in claim order) ranked within their partition key, unkeyed
 * jobs one group, then every key's first before any key's second.
 */
export function roundRobinByKey(jobs: readonly JobRecord[]): JobRecord[] {
  const seen = new Map<string | null, number>();
  const ranked = jobs.map((r, order) => {
    const rank = (seen.get(r.partitionKey) ?? 0) + 1;
    seen.set(r.partitionKey, rank);
    return { r, rank, order };
  });
  return ranked.sort((a, b) => a.rank - b.rank || a.order - b.order).map((x) => x.r);
}

/** What explain.ts needs to know about `job` from the job records. */
export function explainFactsOf(
  jobs: Iterable<JobRecord>,
  job: JobRecord,
  now: Date,
): ReturnType<ExplainSources['jobFacts']> {
  const all = [...jobs];
  let olderLive = 0;
  let olderLiveHead: number | null = null;
  let youngerProcessing = 0;
  let youngerProcessingHead: number | null = null;
  if (job.partitionKey !== null)
    for (const r of all) {
      if (r.queue !== job.queue || r.partitionKey !== job.partitionKey || r.id === job.id) continue;
      if (r.id < job.id && isLive(r)) {
        olderLive++;
        olderLiveHead ??= r.id;
      }
      if (r.id > job.id && r.status === 'processing') {
        youngerProcessing++;
        youngerProcessingHead ??= r.id;
      }
    }
  return {
    queue: job.queue,
    status: job.status,
    attempts: job.attempts,
    availableAt: new Date(job.availableAt.getTime()),
    now,
    olderLive,
    olderLiveHead,
    youngerProcessing,
    youngerProcessingHead,
    inQueueProcessing: processingIn(all, job.queue),
  };
}
