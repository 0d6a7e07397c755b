import type { Command } from 'commander';
import { InvalidArgumentError } from '../../core/errors.js';
import { TaskClient } from '../../client/task-client.js';
import { HttpTaskWorker } from '../../processes/task-worker.js';
import { defaultHolderId } from '../../runtime/identity.js';
import type { CliContext } from '../context.js';
import { processLogger } from '../logger.js';
import { parseIntegerOption } from '../options.js';
import { untilShutdown } from '../shutdown.js';

interface WorkerOptions {
  url: string;
  processor?: string;
  lease: number;
  poll: number;
  crashRate: string;
}

export function registerWorker(program: Command, ctx: CliContext): void {
  program
    .command('worker')
    .description('run the task worker against the service: next, heartbeat, work, complete')
    .option('--url <url>', 'the service', process.env.LEASEHOLD_URL ?? 'http://127.0.0.1:4000')
    .option('--processor <id>', "this worker's id (default host:pid:random)")
    .option(
      '--lease <ms>',
      'claim duration asked of the service',
      parseIntegerOption('--lease', 500, 3_600_000),
      10_000,
    )
    .option(
      '--poll <ms>',
      'wait between polls when idle',
      parseIntegerOption('--poll', 10, 60_000),
      500,
    )
    .option('--crash-rate <p>', 'chance per task of dying mid-task on purpose (0 to 1)', '0')
    .action(async (o: WorkerOptions) => {
      const crashRate = Number(o.crashRate);
      if (!(crashRate >= 0 && crashRate <= 1))
        throw new InvalidArgumentError(
          '--crash-rate',
          `must be a number from 0 to 1, got "${o.crashRate}"`,
        );
      const log = processLogger('leasehold-worker');
      const processor = o.processor ?? defaultHolderId();
      const worker = new HttpTaskWorker({
        client: new TaskClient({
          baseUrl: o.url,
          apiKey: process.env.LEASEHOLD_API_KEY,
          timeoutMs: 5_000,
        }),
        processor,
        leaseMs: o.lease,
        pollIntervalMs: o.poll,
        crashRate,
        crash: () => {
          log.warn({ processor }, 'crashing on purpose mid-task (--crash-rate)');
          process.exit(3);
        },
      });
      worker.events.on('task:claimed', (e) => log.info(e, 'claimed task'));
      worker.events.on('task:completed', (e) => log.info(e, 'completed task'));
      worker.events.on('task:abandoned', (e) => log.warn(e, 'abandoned task: claim lost'));
      worker.events.on('task:refused', (e) => log.warn(e, 'the service refused our result'));
      worker.events.on('worker:error', (e) => log.warn(e, 'service unreachable; retrying'));
      ctx.out.write(`leasehold worker ${processor} on ${o.url}\n`);
      worker.start();
      await untilShutdown();
      log.info({ processor }, 'finishing the task in hand, then exiting');
      await worker.stop();
    });
}
