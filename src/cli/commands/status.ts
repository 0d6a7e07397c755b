import type { Command } from 'commander';
import { generatorStatus } from '../../tasks/task-domain.js';
import { DATABASE_URL_HELP, withLeasehold } from '../connect.js';
import type { CliContext } from '../context.js';
import { printObject } from '../output.js';

export function registerStatus(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description('one screen of fleet state: generator, jobs by status, workers, active leases')
    .option('--database-url <url>', DATABASE_URL_HELP)
    .option('--schema <name>', 'schema for the tables', 'leasehold')
    .option('--json', 'print JSON')
    .action((o: { databaseUrl?: string; schema: string; json?: boolean }) =>
      withLeasehold(o, async (lh) => {
        const [generator, counts, workers, active] = await Promise.all([
          generatorStatus(lh),
          lh.jobs.counts(),
          lh.jobs.workers({ limit: 1000 }),
          // Counted, not listed: a listing stops at its page size.
          lh.leases.countActive(),
        ]);
        const jobs: Record<string, Record<string, number>> = {};
        for (const c of counts) (jobs[c.queue] ??= {})[c.status] = c.count;
        // Both kinds (decision 0264): the library's workers and the HTTP task workers.
        const byStatus: Record<string, number> = {};
        const byKind: Record<string, Record<string, number>> = {};
        for (const w of workers) {
          byStatus[w.status] = (byStatus[w.status] ?? 0) + 1;
          const kind = (byKind[w.kind] ??= {});
          kind[w.status] = (kind[w.status] ?? 0) + 1;
        }
        const status = {
          generator,
          jobs,
          workers: byStatus,
          workersByKind: byKind,
          activeLeases: active,
        };
        printObject(
          ctx.out,
          o.json
            ? status
            : {
                ...status,
                generator: `${generator.state} on ${generator.runningOn ?? 'no instance'}`,
              },
          o.json ?? false,
        );
      }),
    );
}
