import type { Migration } from './index.js';

/** Jobs, partitions and workers (filled in by the queue work). */
export const jobs: Migration = {
  version: 3,
  name: 'jobs',
  up: () => `SELECT 1;`,
};
