/**
 * The library's Prometheus metrics (src/metrics/, decision 0258) in a process that is not the
 * HTTP service: a worker runs a few jobs (one retried, one dead), a lease is acquired and
 * refused, an election is won; the registry's text passes `promtool check metrics` and carries
 * the expected series and values.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { PROMTOOL_SKIP, promtoolCheck } from '../support/promtool.js';
import { LIVENESS_MS } from '../support/wait.js';

after(closeTestDatabase);

describe('library metrics', () => {
  it(
    'counts jobs, retries, dead-letters, leases and elections on a registry promtool accepts',
    { skip: PROMTOOL_SKIP },
    () =>
      withSchema('library metrics', async (schema) => {
        const lh = Leasehold.fromEngine(await schema.engine());
        try {
          assert.throws(() => lh.metrics({ registry: {} as Registry }), InvalidArgumentError);
          const registry = new Registry();
          const metrics = lh.metrics({ registry });
          assert.equal(lh.metrics({ registry }), metrics, 'one set per registry');

          const election = lh.elect('importer', { ttl: '30s' });
          const elected = election.events.once('election:elected', { timeoutMs: LIVENESS_MS });
          await election.start();
          await elected;

          const failedOnce = new Set<number>();
          const worker = lh.worker({
            queues: 'mail',
            pollInterval: 50,
            retryBackoff: { baseMs: 1, capMs: 1 },
            handler: async (job) => {
              if (job.payload === 'bad') throw new Error('always fails');
              if (job.payload === 'flaky' && !failedOnce.has(job.id)) {
                failedOnce.add(job.id);
                throw new Error('fails once');
              }
              return 'sent';
            },
          });
          let completed = 0;
          let dead = 0;
          const settled = new Promise<void>((resolve) => {
            const check = (): void => {
              if (completed === 2 && dead === 1) resolve();
            };
            worker.events.on('job:completed', () => (completed++, check()));
            worker.events.on(
              'job:failed',
              ({ outcome }) => (outcome === 'dead' && dead++, check()),
            );
          });
          await worker.start();
          const mail = lh.queue('mail');
          await Promise.all([
            mail.enqueue('ok'),
            mail.enqueue('flaky', { maxAttempts: 3 }),
            mail.enqueue('bad', { maxAttempts: 1 }),
          ]);
          await settled;

          assert.ok((await lh.leases.tryAcquire('report', { holder: 'a', ttl: '30s' })).acquired);
          assert.ok((await lh.leases.tryAcquire('report', { holder: 'a', ttl: '30s' })).acquired);
          assert.ok(!(await lh.leases.tryAcquire('report', { holder: 'b', ttl: '30s' })).acquired);

          const text = await registry.metrics();
          const lint = promtoolCheck(text);
          assert.equal(lint.status, 0, `promtool check metrics: ${lint.said}`);
          assert.equal(lint.said, '', 'promtool has nothing to say');

          for (const line of [
            /^leasehold_lease_acquisitions_total\{result="acquired"\} 1$/m,
            /^leasehold_lease_acquisitions_total\{result="extended"\} 1$/m,
            /^leasehold_lease_acquisitions_total\{result="held"\} 1$/m,
            /^leasehold_leases_active 1$/m,
            /^leasehold_jobs\{queue="mail",status="completed"\} 2$/m,
            /^leasehold_jobs\{queue="mail",status="dead"\} 1$/m,
            /^leasehold_jobs_claimed_total\{queue="mail"\} 4$/m,
            /^leasehold_job_duration_seconds_count\{queue="mail",outcome="completed"\} 2$/m,
            /^leasehold_job_duration_seconds_count\{queue="mail",outcome="retried"\} 1$/m,
            /^leasehold_job_duration_seconds_count\{queue="mail",outcome="dead"\} 1$/m,
            /^leasehold_job_retries_total\{queue="mail"\} 1$/m,
            /^leasehold_jobs_dead_total\{queue="mail"\} 1$/m,
            /^leasehold_claim_latency_seconds_count\{queue="mail"\} [1-9]\d*$/m,
            /^leasehold_workers\{state="running"\} 1$/m,
            /^leasehold_election_terms_total\{election="importer"\} 1$/m,
            /^leasehold_election_leader\{election="importer"\} 1$/m,
            /^leasehold_engine_batch_size_count\{operation="jobEnqueue"\} [1-3]$/m,
            /^leasehold_engine_batch_size_sum\{operation="jobEnqueue"\} 3$/m,
            /^leasehold_engine_call_duration_seconds_count\{operation="jobComplete",outcome="ok"\} [12]$/m,
          ])
            assert.match(text, line);
          assert.doesNotMatch(text, /^(?!leasehold_|#|$)/m, 'every metric is leasehold_*');

          metrics.close();
          assert.equal(
            (await registry.metrics()).trim(),
            '',
            'close() takes the metrics off the registry',
          );
          assert.notEqual(lh.metrics({ registry }), metrics, 'and a new set may register there');
        } finally {
          await lh.close();
        }
      }),
  );
});
