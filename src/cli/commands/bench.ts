/**
 * `leasehold bench [options]`: the repository's benchmark (bench/main.ts) with the same options
 * (`--quick`, `--full`, `--repeat <n>`, `--only <families>`; `leasehold bench --help` lists
 * them). The benchmark and the peers it runs are development dependencies, so this command
 * works from a clone of the repository, not from an installed package. It runs as a child
 * process with the tsx loader, its output passed through and its exit code returned.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { CommanderError, type Command } from 'commander';
import { UnsupportedError } from '../../core/errors.js';
import type { CliContext } from '../context.js';

// Three levels up from src/cli/commands/ (tsx) and from dist/cli/commands/ (built) alike.
const ROOT = new URL('../../../', import.meta.url);
const BENCH_MAIN = new URL('bench/main.ts', ROOT);

export function registerBench(program: Command, ctx: CliContext): void {
  program
    .command('bench')
    .description(
      'benchmark leasehold beside graphile-worker, pg-boss and raw SQL (from a clone of the repository)',
    )
    .argument(
      '[options...]',
      'passed to the benchmark: --quick, --full, --repeat <n>, --only <a,b>',
    )
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (_args: string[], _options: unknown, command: Command) => {
      if (!existsSync(BENCH_MAIN))
        throw new UnsupportedError(
          'leasehold bench runs from a clone of the repository: bench/ is not part of the package',
        );
      const code = await runBench(command.args, ctx);
      // The benchmark printed its own error; only the exit code is left to pass on.
      if (code !== 0) throw new CommanderError(code, 'leasehold.bench', '');
    });
}

function runBench(args: string[], ctx: CliContext): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', BENCH_MAIN.pathname, ...args], {
    cwd: ROOT.pathname,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(ctx.out, { end: false });
  child.stderr.pipe(ctx.err, { end: false });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
