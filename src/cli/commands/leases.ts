import { Option, type Command } from 'commander';
import { LeaseHeldError, LeaseLostError } from '../../core/errors.js';
import { LEASE_LIST_FILTERS, type LeaseListFilter } from '../../core/types.js';
import { DATABASE_URL_HELP, withLeasehold, type DatabaseOptions } from '../connect.js';
import type { CliContext } from '../context.js';
import { LIMITS, requireName, requireOneOf } from '../../core/validate.js';
import { parseDurationOption, parseIntegerOption } from '../options.js';
import { printObject, printRows } from '../output.js';

const COLUMNS = ['id', 'resource', 'holder', 'token', 'state', 'expiresAt', 'renewCount'];
const TERM_COLUMNS = ['token', 'holder', 'startedAt', 'endedAt', 'ended', 'takeover'];

const TTL = parseDurationOption('--ttl', { min: LIMITS.ttlMinMs, max: LIMITS.ttlMaxMs });

interface Common extends DatabaseOptions {
  json?: boolean;
}

export function registerLeases(program: Command, ctx: CliContext): void {
  const leases = program.command('leases').description('inspect and operate leases');
  const common = (c: Command): Command =>
    c
      .option('--database-url <url>', DATABASE_URL_HELP)
      .option('--schema <name>', 'schema for the tables', 'leasehold')
      .option('--json', 'print JSON');

  common(leases.command('list'))
    .description('list leases')
    .addOption(
      new Option('--state <state>', 'which leases').choices(LEASE_LIST_FILTERS).default('all'),
    )
    .option('--limit <n>', 'at most this many', parseIntegerOption('--limit', 1, 1000), 100)
    .action((o: Common & { state: LeaseListFilter; limit: number }) =>
      withLeasehold(o, async (lh) => {
        const rows = await lh.leases.list({ state: o.state, limit: o.limit });
        printRows(ctx.out, rows, COLUMNS, o.json ?? false);
      }),
    );

  common(leases.command('terms <resource>'))
    .description('the terms of a lease, newest first: holder, token, start, end, how it ended')
    .option('--limit <n>', 'at most this many', parseIntegerOption('--limit', 1, 200), 50)
    .action((resource: string, o: Common & { limit: number }) => {
      requireName('resource', resource);
      return withLeasehold(o, async (lh) => {
        const terms = await lh.leases.terms(resource, { limit: o.limit });
        printRows(ctx.out, terms, TERM_COLUMNS, o.json ?? false);
      });
    });

  common(leases.command('record-terms <setting>'))
    .description(
      'turn the recording of lease terms on or off for every instance (off at first: it costs ' +
        'each acquire that starts a new term a row), or show it with "status"',
    )
    .action((setting: string, o: Common) => {
      const choice = requireOneOf('setting', setting, ['on', 'off', 'status'] as const);
      return withLeasehold(o, async (lh) => {
        if (choice !== 'status') await lh.leases.setTermRecording(choice === 'on');
        const recording = await lh.leases.termRecording();
        ctx.out.write(`lease term recording is ${recording ? 'on' : 'off'}\n`);
      });
    });

  common(leases.command('acquire <resource>'))
    .description('acquire a lease (fails with lease_held while another holder has it)')
    .requiredOption('--holder <holder>', 'who takes the lease')
    .addOption(
      new Option('--ttl <duration>', 'lease duration, e.g. 30s')
        .argParser(TTL)
        .default(30_000, '30s'),
    )
    .action((resource: string, o: Common & { holder: string; ttl: number }) => {
      checkNames(resource, o.holder);
      return withLeasehold(o, async (lh) => {
        const result = await lh.leases.tryAcquire(resource, { holder: o.holder, ttl: o.ttl });
        if (!result.acquired)
          throw new LeaseHeldError(
            resource,
            result.current?.holder ?? '?',
            result.current?.expiresAt ?? new Date(0),
          );
        printObject(ctx.out, result.lease, o.json ?? false);
      });
    });

  common(leases.command('renew <resource>'))
    .description('renew a lease you hold')
    .requiredOption('--holder <holder>', 'the current holder')
    .requiredOption(
      '--token <token>',
      'the fencing token of the term',
      parseIntegerOption('--token', 1, Number.MAX_SAFE_INTEGER),
    )
    .addOption(
      new Option('--ttl <duration>', 'new lease duration, e.g. 30s')
        .argParser(TTL)
        .default(30_000, '30s'),
    )
    .action((resource: string, o: Common & { holder: string; token: number; ttl: number }) => {
      checkNames(resource, o.holder);
      return withLeasehold(o, async (lh) => {
        const lease = await lh.leases.renew(
          { resource, holder: o.holder, token: o.token },
          { ttl: o.ttl },
        );
        if (!lease)
          throw new LeaseLostError(resource, 'it is no longer held by this holder and token');
        printObject(ctx.out, lease, o.json ?? false);
      });
    });

  common(leases.command('release <resource>'))
    .description('release a lease you hold')
    .requiredOption('--holder <holder>', 'the current holder')
    .requiredOption(
      '--token <token>',
      'the fencing token of the term',
      parseIntegerOption('--token', 1, Number.MAX_SAFE_INTEGER),
    )
    .action((resource: string, o: Common & { holder: string; token: number }) => {
      checkNames(resource, o.holder);
      return withLeasehold(o, async (lh) => {
        if (!(await lh.leases.release({ resource, holder: o.holder, token: o.token })))
          throw new LeaseLostError(resource, 'it is no longer held by this holder and token');
        ctx.out.write(`released ${resource}\n`);
      });
    });
}

/** Checked before connecting: a bad name is refused without touching the database. */
function checkNames(resource: string, holder: string): void {
  requireName('resource', resource);
  requireName('--holder', holder);
}
