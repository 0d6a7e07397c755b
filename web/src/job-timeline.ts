/**
 * A job's timeline, built from what its row holds (decision 0266): when it was enqueued, when it
 * was due (if later), each failed attempt, its latest claim (who, when, with which generation:
 * the fencing token of that claim), its lease while it runs, and how it ended. The row keeps
 * only the latest claim; each failed attempt names its own claim (worker, token, renewals).
 */
import type { JobView } from './types.js';

export interface TimelineEvent {
  at: string;
  what: string;
  detail?: string;
  tone?: 'bad' | 'ok' | 'muted';
}

export function jobTimeline(job: JobView): TimelineEvent[] {
  const events: TimelineEvent[] = [{ at: job.createdAt, what: 'enqueued' }];
  for (const e of job.errors)
    events.push({
      at: e.at,
      what: `attempt ${e.attempt} failed`,
      detail:
        (e.worker ? `claim by ${e.worker}, token ${e.token ?? '?'}${renewed(e.renewals)}: ` : '') +
        e.error.split('\n', 1)[0],
      tone: 'bad',
    });
  if (job.claimedAt && job.claimedBy)
    events.push({
      at: job.claimedAt,
      what: 'claimed (latest claim)',
      detail: `by ${job.claimedBy}, generation ${job.generation}${renewed(job.renewals)}`,
    });
  if (job.renewedAt && job.status === 'processing')
    events.push({ at: job.renewedAt, what: 'renewed (latest)', tone: 'muted' });
  // When it may run: for a pending job, its first run, a retry after a failure or a retry asked for.
  if (job.status === 'pending' && Date.parse(job.availableAt) > Date.parse(job.createdAt))
    events.push({ at: job.availableAt, what: 'due', tone: 'muted' });
  if (job.status === 'processing' && job.leaseExpiresAt)
    events.push({ at: job.leaseExpiresAt, what: 'lease runs until', tone: 'muted' });
  if (job.finishedAt)
    events.push({
      at: job.finishedAt,
      what: job.status,
      tone: job.status === 'completed' ? 'ok' : job.status === 'dead' ? 'bad' : 'muted',
    });
  return events.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

/** `, renewed 3 times` (nothing for none or unknown). */
function renewed(renewals: number | undefined): string {
  if (!renewals) return '';
  return `, renewed ${renewals} time${renewals === 1 ? '' : 's'}`;
}

/** An attempt's stored error split into its first line and the stack below it (if any). */
export function splitError(error: string): { message: string; stack: string | null } {
  const newline = error.indexOf('\n');
  if (newline < 0) return { message: error, stack: null };
  return { message: error.slice(0, newline), stack: error.slice(newline + 1) };
}
