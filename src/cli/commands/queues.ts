/**
 * `leasehold queues list|pause|resume|configure`: flow control from the command line (issue 26,
 * decision 0242), through the library's one way in (`lh.jobs.queues()`, `lh.queue(name)`).
 * Every input is checked before anything connects: bad input changes nothing.
 */
import {
  Argument,
  InvalidArgumentError as CommanderInvalidArgument,
  type Command,
} from 'commander';
import { formatDuration } from '../../core/duration.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { QUEUE_FAIRNESS, type QueueFairness, type QueueSettings } from '../../core/types.js';
import { requireName } from '../../core/validate.js';
import type { QueueOverview } from '../../queue/job-manager.js';
import { toSettingsChange, type QueueConfiguration } from '../../queue/queue-settings.js';
import { DATABASE_URL_HELP, withLeasehold, type DatabaseOptions } from '../connect.js';
import type { CliContext } from '../context.js';
import { printObject, printRows } from '../output.js';

interface Common extends DatabaseOptions {
  json?: boolean;
}

// `none` stays a string through commander, which stores an option parser's null as ''.
interface ConfigureFlags extends Common {
  concurrency?: number | 'none';
  perKeyConcurrency?: number | 'none';
  rate?: { limit: number; per: string } | 'none';
  fairness?: string;
}

const COLUMNS = [
  'queue',
  'paused',
  'concurrency',
  'perKeyConcurrency',
  'rate',
  'waiting',
  'pending',
  'processing',
  'completed',
  'dead',
  'cancelled',
];

export function registerQueues(program: Command, ctx: CliContext): void {
  const queues = program
    .command('queues')
    .description('flow control of queues: list, pause, resume, configure');
  const common = (c: Command): Command =>
    c
      .option('--database-url <url>', DATABASE_URL_HELP)
      .option('--schema <name>', 'schema for the tables', 'leasehold')
      .option('--json', 'print JSON');
  const queueArgument = (): Argument =>
    new Argument('<queue>', 'the queue name').argParser((value: string) =>
      inOptionNames(() => requireName('queue', value)),
    );

  common(queues.command('list'))
    .description('every queue with jobs or settings: paused, limits and jobs by status')
    .action((o: Common) =>
      withLeasehold(o, async (lh) => {
        const all = await lh.jobs.queues();
        if (o.json) printRows(ctx.out, all, COLUMNS, true);
        else printRows(ctx.out, all.map(row), COLUMNS, false);
      }),
    );

  for (const action of ['pause', 'resume'] as const) {
    common(queues.command(action))
      .addArgument(queueArgument())
      .description(
        action === 'pause'
          ? 'no job of the queue starts until it is resumed (jobs in flight finish)'
          : 'let the jobs of a paused queue start again',
      )
      .action((queue: string, o: Common) =>
        withLeasehold(o, async (lh) => {
          const q = lh.queue(queue);
          const settings = action === 'pause' ? await q.pause() : await q.resume();
          printSettings(ctx, settings, o.json ?? false);
        }),
      );
  }

  common(queues.command('configure'))
    .addArgument(queueArgument())
    .description("change a queue's limits; options left out stay as they are")
    .option(
      '--concurrency <n|none>',
      'jobs in flight across every worker',
      capOption('--concurrency'),
    )
    .option(
      '--per-key-concurrency <n|none>',
      'jobs in flight per partition key (default 1)',
      capOption('--per-key-concurrency'),
    )
    .option('--rate <limit/per|none>', 'at most LIMIT starts per window, e.g. 100/1s', rateOption)
    .option('--fairness <oldest|key>', `which job starts first (${QUEUE_FAIRNESS.join(', ')})`)
    .action((queue: string, o: ConfigureFlags) => {
      const configuration: QueueConfiguration = {
        ...(o.concurrency === undefined ? {} : { concurrency: orNull(o.concurrency) }),
        ...(o.perKeyConcurrency === undefined
          ? {}
          : { perKeyConcurrency: orNull(o.perKeyConcurrency) }),
        ...(o.rate === undefined ? {} : { rate: orNull(o.rate) }),
        ...(o.fairness === undefined ? {} : { fairness: o.fairness as QueueFairness }),
      };
      if (Object.keys(configuration).length === 0)
        throw new InvalidArgumentError(
          'configure',
          'give at least one of --concurrency, --per-key-concurrency, --rate, --fairness',
        );
      // The library's validator, before connecting; configure() checks the same again.
      inOptionNames(() => toSettingsChange(configuration));
      return withLeasehold(o, async (lh) => {
        const settings = await lh.queue(queue).configure(configuration);
        printSettings(ctx, settings, o.json ?? false);
      });
    });
}

/** A table row: the rate as `limit/per`, and the counts beside the settings. */
function row(queue: QueueOverview): Record<string, unknown> {
  return {
    ...queue,
    ...queue.counts,
    rate: rateText(queue.rate),
  };
}

function printSettings(ctx: CliContext, settings: QueueSettings, json: boolean): void {
  printObject(ctx.out, json ? settings : { ...settings, rate: rateText(settings.rate) }, json);
}

function rateText(rate: QueueSettings['rate']): string | null {
  return rate ? `${rate.limit}/${formatDuration(rate.per)}` : null;
}

/** `N` or `none` (removes the cap); the bounds are the library's, checked with the rest. */
function capOption(flag: string) {
  return (value: string): number | 'none' => {
    if (value === 'none') return value;
    if (!/^\d+$/.test(value))
      throw new CommanderInvalidArgument(
        `${flag} must be a positive integer or none, got "${value}"`,
      );
    return Number(value);
  };
}

/** `LIMIT/PER` (`100/1s`, `5/250ms`, `10/60000`) or `none` (removes the rate). */
function rateOption(value: string): { limit: number; per: string } | 'none' {
  if (value === 'none') return value;
  const match = /^(\d+)\/(.+)$/.exec(value);
  if (!match)
    throw new CommanderInvalidArgument(
      `--rate must be LIMIT/PER such as 100/1s, or none, got "${value}"`,
    );
  return { limit: Number(match[1]), per: match[2]! };
}

function orNull<T>(value: T | 'none'): T | null {
  return value === 'none' ? null : value;
}

/** The library's field names, as this command spells them. */
const OPTION_NAMES: Readonly<Record<string, string>> = {
  queue: '<queue>',
  concurrency: '--concurrency',
  perKeyConcurrency: '--per-key-concurrency',
  rate: '--rate',
  'rate.limit': '--rate',
  'rate.per': '--rate',
  fairness: '--fairness',
};

/** Runs a check whose invalid_argument names the command's option, not the library's field. */
function inOptionNames<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    const option = error instanceof InvalidArgumentError ? OPTION_NAMES[error.field] : undefined;
    if (option === undefined || !(error instanceof InvalidArgumentError)) throw error;
    const detail = error.message.slice(error.field.length + 2);
    // `--rate: per must be at least 10ms`: which half of LIMIT/PER was refused.
    const half = error.field.startsWith('rate.') ? `${error.field.slice('rate.'.length)} ` : '';
    throw new InvalidArgumentError(option, `${half}${detail}`);
  }
}
