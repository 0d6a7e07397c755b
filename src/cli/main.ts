#!/usr/bin/env node
/**
 * The `leasehold` command. Each subcommand lives in its own file under commands/. Errors end
 * as one line on stderr and a non-zero exit; stack traces only with LEASEHOLD_DEBUG=1.
 */
import { Command, CommanderError } from 'commander';
import { isLeaseholdError } from '../core/errors.js';
import type { CliContext } from './context.js';

type Register = (program: Command, ctx: CliContext) => void;

/**
 * Each command's module, loaded only when needed: most of the CLI's start-up was loading every
 * command (the HTTP service and the demo with fastify among them) to run one. A run naming a
 * command loads that command alone; anything else (no command, `--help`, a mistyped name, which
 * commander answers with the whole list) loads them all. Listed in the order help shows them.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  demo: async () => (await import('./commands/demo.js')).registerDemo,
  migrate: async () => (await import('./commands/migrate.js')).registerMigrate,
  serve: async () => (await import('./commands/serve.js')).registerServe,
  worker: async () => (await import('./commands/worker.js')).registerWorker,
  generate: async () => (await import('./commands/generate.js')).registerGenerate,
  leases: async () => (await import('./commands/leases.js')).registerLeases,
  jobs: async () => (await import('./commands/jobs.js')).registerJobs,
  queues: async () => (await import('./commands/queues.js')).registerQueues,
  status: async () => (await import('./commands/status.js')).registerStatus,
  bench: async () => (await import('./commands/bench.js')).registerBench,
};

/** The commands a run of `argv` needs: the one it names, or every one. */
function commandsFor(argv: readonly string[]): string[] {
  const first = argv[0];
  return first !== undefined && Object.hasOwn(COMMANDS, first) ? [first] : Object.keys(COMMANDS);
}

export async function buildProgram(
  ctx: CliContext,
  argv: readonly string[] = [],
): Promise<Command> {
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
  const registers = await Promise.all(commandsFor(argv).map((name) => COMMANDS[name]!()));
  for (const register of registers) register(program, ctx);
  for (const command of program.commands) command.exitOverride();
  return program;
}

export async function runCli(argv: string[], ctx: CliContext): Promise<number> {
  try {
    await (await buildProgram(ctx, argv)).parseAsync(argv, { from: 'user' });
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
