import type { Migration } from './migration.js';

/**
 * The slot a schedule expects after each claimed one, written by the claimant with the claim
 * (decision 0301): the series (cron, time zone, period) lives only in the instances' code, so
 * this is how a reader without it (the dashboard) can say when a schedule runs next. Nullable:
 * claims made before this migration, or by an older instance during a rolling deploy, have none.
 */
export const scheduleNextSlot: Migration = {
  version: 5,
  name: 'schedule_next_slot',
  up: (s) => `
    ALTER TABLE ${s}.schedule_slots ADD COLUMN next_slot timestamptz;
  `,
};
