#!/usr/bin/env node
/**
 * The `leasehold` command. Each subcommand lives in its own file under commands/. Errors end
 * as one line on stderr and a non-zero exit; stack traces only with LEASEHOLD_DEBUG=1.
 */
import { Command, CommanderError } from 'commander';
import { isLeaseholdError } from '../core/errors.js';
import { registerBench } from './commands/bench.js';
import { registerDemo } from './commands/demo.js';
import { registerMigrate } from './commands/migrate.js';
import { registerServe } from './commands/serve.js';
import { registerGenerate } from './commands/generate.js';
import { registerJobs } from './commands/jobs.js';
import { registerLeases } from './commands/leases.js';
import { registerQueues } from './commands/queues.js';
import { registerStatus } from './commands/status.js';
import { registerWorker } from './commands/worker.js';
import type { CliContext } from './context.js';

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('leasehold')
    .description(
      'leases with fencing tokens, locks, leader election and a work queue on PostgreSQL',
    )
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.out.write(s),
      writeErr: (s) => ctx.err.write(s),
      // Commander's own refusals (unknown option, missing argument, bad value) in our one-line
      // shape: `leasehold: invalid_argument: <message>`.
      outputError: (s, write) => write(`leasehold: invalid_argument: ${s.replace(/^error: /, '')}`),
    });
  registerDemo(program, ctx);
  registerMigrate(program, ctx);
  registerServe(program, ctx);
  registerWorker(program, ctx);
  registerGenerate(program, ctx);
  registerLeases(program, ctx);
  registerJobs(program, ctx);
  registerQueues(program, ctx);
  registerStatus(program, ctx);
  registerBench(program, ctx);
  for (const command of program.commands) command.exitOverride();
  return program;
}

export async function runCli(argv: string[], ctx: CliContext): Promise<number> {
  try {
    await buildProgram(ctx).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    const code = isLeaseholdError(error) ? error.code : 'internal';
    ctx.err.write(`leasehold: ${code}: ${(error as Error).message}\n`);
    if (process.env.LEASEHOLD_DEBUG) ctx.err.write(`${(error as Error).stack}\n`);
    return 1;
  }
}

const invokedDirectly =
  process.argv[1] &&
  import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/').split('/').pop()!);
if (invokedDirectly) {
  const code = await runCli(process.argv.slice(2), { out: process.stdout, err: process.stderr });
  process.exit(code);
}
