import { leases } from './0001_leases.js';
import { locks } from './0002_locks.js';
import { jobs } from './0003_jobs.js';
import { controls } from './0004_controls.js';
import { scheduleNextSlot } from './0005_schedule_next_slot.js';
import { sessionLockTerms } from './0006_session_lock_terms.js';
import { epochs } from './0007_epochs.js';
import { queueSettings } from './0008_queue_settings.js';
import { semaphores } from './0009_semaphores.js';
import { jobTimeout } from './0010_job_timeout.js';
import { rateWindow } from './0011_rate_window.js';
import { jobProgress } from './0012_job_progress.js';
import { jobWaited } from './0013_job_waited.js';
import { claimCounts } from './0014_claim_counts.js';
import { jobSteps } from './0015_job_steps.js';
import { jobFlows } from './0016_job_flows.js';
import { workerKind } from './0017_worker_kind.js';
import { queueTrends } from './0018_queue_trends.js';
import { leaseTerms } from './0019_lease_terms.js';
import { jobRenewals } from './0020_job_renewals.js';
import { jobTallies } from './0021_job_tallies.js';
import { jobsFillfactor } from './0022_jobs_fillfactor.js';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
  leases,
  locks,
  jobs,
  controls,
  scheduleNextSlot,
  sessionLockTerms,
  epochs,
  queueSettings,
  semaphores,
  jobTimeout,
  rateWindow,
  jobProgress,
  jobWaited,
  claimCounts,
  jobSteps,
  jobFlows,
  workerKind,
  queueTrends,
  leaseTerms,
  jobRenewals,
  jobTallies,
  jobsFillfactor,
];
