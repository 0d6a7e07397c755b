import { Argument, Option, type Command } from 'commander';
import { typeName } from '../../core/duration.js';
import { InvalidArgumentError, NotFoundError } from '../../core/errors.js';
import { JOB_STATUSES, type JobStatus } from '../../core/types.js';
import { requireName } from '../../core/validate.js';
import {
  BULK_BATCH,
  BULK_STATUSES,
  toJobMatch,
  type BulkAction,
  type JobFilter,
  FILTER_FIELDS,
} from '../../queue/bulk-operations.js';
import { QUEUE_LIMITS, toJobSpec, type EnqueueOptions } from '../../queue/enqueue-options.js';
import { DATABASE_URL_HELP, withLeasehold, type DatabaseOptions } from '../connect.js';
import type { CliContext } from '../context.js';
import { parseIntegerOption } from '../options.js';
import { printObject, printRows } from '../output.js';
import { jobRefusal } from '../../service/job-refusal.js';

const COLUMNS = ['id', 'queue', 'status', 'attempts', 'partitionKey', 'availableAt', 'lastError'];
/** How many flow children `jobs show` lists (`childCount` counts them all). */
const SHOWN_CHILDREN = 100;

/** A command's `<id>` argument: a job id, checked before connecting. */
const jobIdArgument = (): Argument =>
  new Argument('<id>', 'the job id').argParser(
    parseIntegerOption('<id>', 1, Number.MAX_SAFE_INTEGER),
  );

interface Common extends DatabaseOptions {
  json?: boolean;
}

export function registerJobs(program: Command, ctx: CliContext): void {
  const jobs = program.command('jobs').description('inspect and operate queue jobs');
  const common = (c: Command): Command =>
    c
      .option('--database-url <url>', DATABASE_URL_HELP)
      .option('--schema <name>', 'schema for the tables', 'leasehold')
      .option('--json', 'print JSON');

  common(jobs.command('list'))
    .description('list jobs')
    .option('--queue <name>', 'only this queue')
    .addOption(new Option('--status <status>', 'only jobs in this status').choices(JOB_STATUSES))
    .option('--limit <n>', 'at most this many', parseIntegerOption('--limit', 1, 1000), 100)
    .action((o: Common & { queue?: string; status?: JobStatus; limit: number }) => {
      const queue = o.queue === undefined ? undefined : requireName('--queue', o.queue);
      return withLeasehold(o, async (lh) => {
        const rows = await lh.jobs.list({
          ...(queue ? { queue } : {}),
          ...(o.status ? { status: o.status } : {}),
          limit: o.limit,
        });
        printRows(ctx.out, rows, COLUMNS, o.json ?? false);
      });
    });

  common(jobs.command('enqueue <queue> <payload>'))
    .description('enqueue a job; payload is a JSON object')
    .option('--key <key>', 'dedup key')
    .option('--partition-key <key>', 'run one at a time, in order, with others of this key')
    .option(
      '--max-attempts <n>',
      `attempts before dead letter (default ${QUEUE_LIMITS.maxAttemptsDefault}, the library's)`,
      parseIntegerOption('--max-attempts', 1, QUEUE_LIMITS.maxAttemptsMax),
    )
    .option(
      '--on-conflict <mode>',
      "with --key, when a job with that key is live: 'keep' (default) or 'replace' it while pending",
    )
    .option(
      '--debounce <duration>',
      "with --key: run once, this long after the last enqueue with that key (e.g. '5s')",
    )
    .action(
      (
        queue: string,
        payload: string,
        o: Common & {
          key?: string;
          partitionKey?: string;
          maxAttempts?: number;
          onConflict?: string;
          debounce?: string;
        },
      ) => {
        // Everything is checked before connecting: bad input never touches the database.
        let parsed: unknown;
        try {
          parsed = JSON.parse(payload);
        } catch {
          throw new InvalidArgumentError('payload', 'must be valid JSON, e.g. \'{"n":1}\'');
        }
        // The command's own contract: a payload is a JSON object (as the task API's task_data).
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          throw new InvalidArgumentError(
            'payload',
            `must be a JSON object, got ${typeName(parsed)}`,
          );
        const options: EnqueueOptions = {
          ...(o.key === undefined ? {} : { key: o.key }),
          ...(o.partitionKey === undefined ? {} : { partitionKey: o.partitionKey }),
          ...(o.maxAttempts === undefined ? {} : { maxAttempts: o.maxAttempts }),
          // Checked by the library, whose error names the option (OPTION_NAMES).
          ...(o.onConflict === undefined
            ? {}
            : { onConflict: o.onConflict as EnqueueOptions['onConflict'] }),
          ...(o.debounce === undefined ? {} : { debounce: o.debounce }),
        };
        // The library's one validator (and defaults: maxAttempts 10, decision 0231), before
        // connecting; lh.queue().enqueue checks the same again.
        inOptionNames(() => toJobSpec(queue, parsed, options));
        return withLeasehold(o, async (lh) => {
          const {
            created: _c,
            replaced: _r,
            ...job
          } = await lh.queue(queue).enqueue(parsed, options);
          printObject(ctx.out, job, o.json ?? false);
        });
      },
    );

  common(jobs.command('show'))
    .addArgument(jobIdArgument())
    .description('one job, with its recorded steps and its flow children')
    .action((id: number, o: Common) =>
      withLeasehold(o, async (lh) => {
        const [job, steps, family] = await Promise.all([
          lh.jobs.get(id),
          lh.jobs.steps(id),
          lh.jobs.children(id, { limit: SHOWN_CHILDREN }),
        ]);
        if (!job) throw new NotFoundError('job', id);
        printObject(
          ctx.out,
          {
            ...job,
            steps: steps.map((s) => ({ name: s.name, value: s.value, generation: s.generation })),
            children: family.children.map((c) => ({ id: c.id, queue: c.queue, status: c.status })),
            childCount: family.total,
          },
          o.json ?? false,
        );
      }),
    );

  common(jobs.command('explain'))
    .addArgument(jobIdArgument())
    .description('why a job is not running: the first reason that applies')
    .action((id: number, o: Common) =>
      withLeasehold(o, async (lh) => {
        const explanation = await lh.jobs.explain(id);
        if (!explanation) throw new NotFoundError('job', id);
        printObject(ctx.out, explanation, o.json ?? false);
      }),
    );

  for (const action of ['retry', 'cancel', 'delete'] as const) {
    common(jobs.command(action))
      .addArgument(
        new Argument('[id]', 'the job id; without it, --queue and a filter').argParser(
          parseIntegerOption('<id>', 1, Number.MAX_SAFE_INTEGER),
        ),
      )
      .description(ACTION_HELP[action])
      .option('--queue <name>', 'every matching job of this queue (instead of an id)')
      .option(
        '--status <list>',
        `only these statuses, comma-separated (${BULK_STATUSES[action].join(', ')})`,
      )
      .option('--type <type>', 'only jobs of this type')
      .option('--key <key>', 'only jobs with this dedup key')
      .option('--partition-key <key>', 'only jobs of this partition key')
      .option('--created-since <instant>', 'only jobs created at or after this ISO 8601 instant')
      .option('--created-before <instant>', 'only jobs created before this ISO 8601 instant')
      .option(
        '--batch-size <n>',
        `jobs changed per statement (default ${BULK_BATCH.default})`,
        parseIntegerOption('--batch-size', 1, BULK_BATCH.max),
      )
      .action((id: number | undefined, o: Common & FilterOptions) =>
        id === undefined ? changeAllJobs(ctx, action, o) : oneJob(ctx, action, id, o),
      );
  }
}

const ACTION_HELP: Record<BulkAction, string> = {
  retry: 'run a finished, dead or cancelled job again, or every matching one of --queue',
  cancel: 'cancel a pending or running job, or every matching one of --queue',
  delete: 'delete a job that is not running, or every matching one of --queue',
};

interface FilterOptions {
  queue?: string;
  status?: string;
  type?: string;
  key?: string;
  partitionKey?: string;
  createdSince?: string;
  createdBefore?: string;
  batchSize?: number;
}

/** The filter flags, as the library names them. */
const FILTER_FLAGS = FILTER_FIELDS;

function oneJob(ctx: CliContext, action: BulkAction, id: number, o: Common & FilterOptions) {
  const flag = [...FILTER_FLAGS, 'queue', 'batchSize'].find(
    (name) => o[name as keyof FilterOptions] !== undefined,
  );
  if (flag !== undefined)
    throw new InvalidArgumentError(
      OPTION_NAMES[flag] ?? `--${flag}`,
      'applies to every matching job of --queue, not to one job id',
    );
  return withLeasehold(o, async (lh) => {
    if (action === 'delete') {
      if (await lh.jobs.delete(id)) return printObject(ctx.out, { deleted: id }, o.json ?? false);
      const current = await lh.jobs.get(id);
      if (!current) throw new NotFoundError('job', id);
      throw jobRefusal(action, current);
    }
    const job = action === 'retry' ? await lh.jobs.retry(id) : await lh.jobs.cancel(id);
    // jobCancel answers the job as it is, so a finished one comes back unchanged.
    if (job && (action === 'retry' || job.status === 'cancelled')) {
      printObject(ctx.out, job, o.json ?? false);
      return;
    }
    const current = job ?? (await lh.jobs.get(id));
    if (!current) throw new NotFoundError('job', id);
    throw jobRefusal(action, current);
  });
}

/** `leasehold jobs retry --queue emails --status dead`: prints how many jobs changed. */
function changeAllJobs(ctx: CliContext, action: BulkAction, o: Common & FilterOptions) {
  if (o.queue === undefined)
    throw new InvalidArgumentError(
      '--queue',
      `is required without a job id: leasehold jobs ${action} <id>, or leasehold jobs ${action} --queue <name> [--status ...]`,
    );
  const queue = requireName('--queue', o.queue);
  const filter: JobFilter = {};
  for (const name of FILTER_FLAGS) {
    const value = o[name];
    if (value === undefined) continue;
    if (name === 'status') filter.status = value.split(',') as JobStatus[];
    else filter[name] = value;
  }
  const options = o.batchSize === undefined ? {} : { batchSize: o.batchSize };
  // The library's one validator, before connecting: bad input never touches the database.
  inOptionNames(() => toJobMatch(queue, action, filter));
  return withLeasehold(o, async (lh) => {
    const q = lh.queue(queue);
    const changed =
      action === 'retry'
        ? await q.retryAll(filter, options)
        : action === 'cancel'
          ? await q.cancelAll(filter, options)
          : await q.deleteAll(filter, options);
    printObject(ctx.out, { changed }, o.json ?? false);
  });
}

/** The library's option names, as this command spells them. */
const OPTION_NAMES: Readonly<Record<string, string>> = {
  key: '--key',
  partitionKey: '--partition-key',
  maxAttempts: '--max-attempts',
  onConflict: '--on-conflict',
  debounce: '--debounce',
  queue: '--queue',
  status: '--status',
  type: '--type',
  createdSince: '--created-since',
  createdBefore: '--created-before',
  batchSize: '--batch-size',
};

/** Runs a check whose invalid_argument names the command's option (--key), not the library's. */
function inOptionNames(check: () => unknown): void {
  try {
    check();
  } catch (error) {
    const option = error instanceof InvalidArgumentError ? OPTION_NAMES[error.field] : undefined;
    if (option === undefined || !(error instanceof InvalidArgumentError)) throw error;
    throw new InvalidArgumentError(option, error.message.slice(error.field.length + 2));
  }
}
