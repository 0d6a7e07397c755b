import { Option, type Command } from 'commander';
import { InvalidArgumentError } from '../../core/errors.js';
import { TaskClient } from '../../client/task-client.js';
import { Leasehold } from '../../leasehold.js';
import { QueueTaskWorker } from '../../processes/queue-task-worker.js';
import { HttpTaskWorker } from '../../processes/task-worker.js';
import { defaultHolderId } from '../../runtime/identity.js';
import { DATABASE_URL_HELP } from '../connect.js';
import type { CliContext } from '../context.js';
import { resolveDatabase } from '../database.js';
import { asLogger, processLogger } from '../logger.js';
import { parseIntegerOption } from '../options.js';
import { untilShutdown, type ShutdownReason } from '../shutdown.js';

interface WorkerOptions {
  url: string;
  databaseUrl?: string;
  inProcess?: boolean;
  schema: string;
  workerId?: string;
  /** The former name of `--worker-id` (decision 0235), kept as its alias. */
  processor?: string;
  concurrency: number;
  lease: number;
  poll: number;
  crashRate: string;
  drainTimeout: number;
  maintenance: boolean;
  once?: boolean;
  onceTimeout: number;
}

/**
 * `leasehold worker`: the seed's task worker, over HTTP against a service (the default), or in
 * process on PostgreSQL (`--database-url` / `--in-process`) with the library worker. Both do
 * the same demo work and end the same way on SIGTERM or SIGINT: no new claims, the tasks in
 * hand handed back (over HTTP at once; in process after `--drain-timeout`), then exit 0.
 */
export function registerWorker(program: Command, ctx: CliContext): void {
  program
    .command('worker')
    .description(
      'run the task worker: over HTTP against the service, or in process on PostgreSQL (--database-url, --in-process)',
    )
    .option('--url <url>', 'the service', process.env.LEASEHOLD_URL ?? 'http://127.0.0.1:4000')
    .addOption(
      new Option(
        '--database-url <url>',
        'work in process on this PostgreSQL instead of over HTTP',
      ).conflicts('url'),
    )
    .addOption(
      new Option('--in-process', `work in process on PostgreSQL: ${DATABASE_URL_HELP}`).conflicts(
        'url',
      ),
    )
    .option('--schema <name>', 'schema for the tables (in process)', 'leasehold')
    .option('--worker-id <id>', "this worker's id (default host:pid:random)")
    .option('--processor <id>', 'alias of --worker-id (its former name)')
    .option(
      '--concurrency <n>',
      'tasks worked on at once',
      parseIntegerOption('--concurrency', 1, 1_000),
      1,
    )
    .option(
      '--lease <ms>',
      'claim duration, renewed every third of it',
      parseIntegerOption('--lease', 500, 3_600_000),
      10_000,
    )
    .option(
      '--poll <ms>',
      'wait between polls when idle (spread a little at random)',
      parseIntegerOption('--poll', 10, 60_000),
      500,
    )
    .option('--crash-rate <p>', 'chance per task of dying mid-task on purpose (0 to 1)', '0')
    .option(
      '--drain-timeout <ms>',
      'on shutdown, time the tasks in hand get to finish before they are handed back (in process)',
      parseIntegerOption('--drain-timeout', 0, 600_000),
      5_000,
    )
    .option('--no-maintenance', 'do not run queue maintenance beside the worker (in process)')
    .option(
      '--once',
      'run the tasks that are ready, then exit with a summary (in process; for cron jobs and scripts)',
    )
    .option(
      '--once-timeout <ms>',
      'with --once: stop after this long, handing back what still runs',
      parseIntegerOption('--once-timeout', 0, 3_600_000),
      60_000,
    )
    .action(async (o: WorkerOptions) => {
      const crashRate = Number(o.crashRate);
      if (o.crashRate.trim() === '' || !(crashRate >= 0 && crashRate <= 1))
        throw new InvalidArgumentError(
          '--crash-rate',
          `must be a number from 0 to 1, got "${o.crashRate}"`,
        );
      if (o.workerId !== undefined && o.processor !== undefined && o.workerId !== o.processor)
        throw new InvalidArgumentError(
          '--worker-id',
          'give --worker-id or its alias --processor, not both with different ids',
        );
      if (o.once && o.databaseUrl === undefined && !o.inProcess)
        throw new InvalidArgumentError(
          '--once',
          'works in process: give --database-url or --in-process as well',
        );
      // Listen for the signals first: a SIGTERM while connecting still ends in a clean drain.
      const shutdown = untilShutdown();
      const workerId = o.workerId ?? o.processor ?? defaultHolderId();
      if (o.databaseUrl !== undefined || o.inProcess)
        await runInProcess(ctx, o, workerId, crashRate, shutdown);
      else await runOverHttp(ctx, o, workerId, crashRate, shutdown);
    });
}

async function runOverHttp(
  ctx: CliContext,
  o: WorkerOptions,
  workerId: string,
  crashRate: number,
  shutdown: Promise<ShutdownReason>,
): Promise<void> {
  const log = processLogger('leasehold-worker');
  const client = new TaskClient({
    baseUrl: o.url,
    apiKey: process.env.LEASEHOLD_API_KEY,
    timeoutMs: 5_000,
  });
  // One claim loop per slot; with more than one, each loop is a worker of its own.
  const workers = Array.from({ length: o.concurrency }, (_, i) => {
    const id = o.concurrency === 1 ? workerId : `${workerId}#${i + 1}`;
    const worker = new HttpTaskWorker({
      client,
      workerId: id,
      leaseMs: o.lease,
      pollIntervalMs: o.poll,
      crashRate,
      logger: log,
      crash: () => {
        log.warn({ workerId: id }, 'crashing on purpose mid-task (--crash-rate)');
        process.exit(3);
      },
    });
    worker.events.on('task:claimed', (e) => log.info(e, 'claimed task'));
    worker.events.on('task:completed', (e) => log.info(e, 'completed task'));
    worker.events.on('task:abandoned', (e) => log.warn(e, 'abandoned task: claim lost'));
    worker.events.on('task:refused', (e) => log.warn(e, 'the service refused our result'));
    worker.events.on('worker:error', (e) => log.warn(e, 'service unreachable; retrying'));
    return worker;
  });
  ctx.out.write(`leasehold worker ${workerId} on ${o.url}\n`);
  for (const worker of workers) worker.start();
  await shutdown;
  log.info({ workerId }, 'handing back the tasks in hand, then exiting');
  await Promise.all(workers.map((w) => w.stop()));
}

async function runInProcess(
  ctx: CliContext,
  o: WorkerOptions,
  workerId: string,
  crashRate: number,
  shutdown: Promise<ShutdownReason>,
): Promise<void> {
  const log = processLogger('leasehold-worker');
  const database = await resolveDatabase(o.databaseUrl);
  const lh = await Leasehold.connect({
    connectionString: database.connectionString,
    schema: o.schema,
    // The claim loop, the renewer, the outcome batcher, presence and maintenance share it.
    poolSize: Math.min(o.concurrency, 16) + 4,
    connectTimeoutMs: 5_000,
  });
  try {
    await lh.migrate();
    const worker = new QueueTaskWorker({
      lh,
      id: workerId,
      concurrency: o.concurrency,
      leaseMs: o.lease,
      pollIntervalMs: o.poll,
      crashRate,
      crash: () => {
        log.warn({ workerId }, 'crashing on purpose mid-task (--crash-rate)');
        process.exit(3);
      },
      maintenance: o.maintenance ? {} : false,
      logger: asLogger(log),
    });
    const ref = (job: { id: number; generation: number }) => ({
      id: job.id,
      token: job.generation,
    });
    worker.worker.events.on('job:started', (e) => log.info(ref(e.job), 'claimed task'));
    worker.worker.events.on('job:completed', (e) => log.info(ref(e.job), 'completed task'));
    worker.worker.events.on('job:lost', (e) =>
      log.warn({ ...ref(e.job), reason: e.reason }, 'abandoned task: claim lost'),
    );
    worker.worker.events.on('job:failed', (e) =>
      log.warn({ ...ref(e.job), error: e.error, outcome: e.outcome }, 'task failed'),
    );
    if (o.once) {
      const r = await worker.runUntilEmpty({ timeoutMs: o.onceTimeout });
      ctx.out.write(
        `leasehold worker ${workerId}: ${r.completed} completed, ${r.retried} retried, ` +
          `${r.dead} dead, ${r.lost} lost, ${r.handedBack} handed back ` +
          `(${r.empty ? 'nothing left ready' : `stopped at --once-timeout ${o.onceTimeout} ms`})\n`,
      );
      return;
    }
    await worker.start();
    ctx.out.write(
      `leasehold worker ${workerId} in process on ${database.description} (schema ${o.schema})\n`,
    );
    await shutdown;
    log.info({ workerId }, 'draining: no new claims; the tasks in hand finish or are handed back');
    const { handedBack } = await worker.stop({ timeoutMs: o.drainTimeout });
    ctx.out.write(`leasehold worker ${workerId} stopped (${handedBack} handed back)\n`);
  } finally {
    await lh.close();
    await database.stop();
  }
}
