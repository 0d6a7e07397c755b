/**
 * The demo's schedule: every `every` (10 s in the demo), the elected leader among the instances
 * that start it reports the job counts per status. It runs in mode `leader` so that the
 * dashboard's "Leaders & schedules" panel has a live election (`schedule:queue-report`) and a
 * schedule to show. Only the demo starts it; `leasehold serve` does not.
 */
import type { Duration } from '../core/duration.js';
import type { LeaseholdFacade } from '../leasehold.js';
import type { Schedule } from '../schedules/schedule.js';

export const QUEUE_REPORT_SCHEDULE = 'queue-report';

export interface QueueReportOptions {
  /** Default 10 s. */
  every?: Duration;
  instanceId?: string;
  /** Receives one line per report, e.g. `queue report: 3 pending, 120 completed (token 1)`. */
  log: (line: string) => void;
}

export function startQueueReport(lh: LeaseholdFacade, options: QueueReportOptions): Schedule {
  return lh.schedule(
    QUEUE_REPORT_SCHEDULE,
    {
      every: options.every ?? '10s',
      mode: 'leader',
      ...(options.instanceId === undefined ? {} : { instanceId: options.instanceId }),
      onError: (error) => options.log(`queue report failed: ${String(error)}`),
    },
    async ({ token }) => {
      const totals = new Map<string, number>();
      for (const c of await lh.jobs.counts())
        totals.set(c.status, (totals.get(c.status) ?? 0) + c.count);
      const counts = [...totals].map(([status, n]) => `${n} ${status}`).join(', ');
      options.log(`queue report: ${counts || 'no jobs'} (leader token ${token})`);
    },
  );
}
