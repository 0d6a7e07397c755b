/**
 * Child processes of the benchmark (the HTTP service, idle-worker hosts): TypeScript files of
 * this repository run with the tsx loader, waited on by an output line, and stopped by their
 * own pid when the scenario ends (or killed when the benchmark exits first).
 */
import { spawn, type ChildProcess } from 'node:child_process';

const ROOT = new URL('../..', import.meta.url).pathname;

export interface BenchChild {
  readonly child: ChildProcess;
  /** Resolves with the first match of `pattern` in stdout or stderr. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Runs `path` (relative to the repository root) with the tsx loader, `env` added to ours. */
export function startChild(
  path: string,
  args: string[],
  env: Record<string, string> = {},
): BenchChild {
  const child = spawn(process.execPath, ['--import', 'tsx', `${ROOT}${path}`, ...args], {
    cwd: ROOT,
    env: { ...process.env, LEASEHOLD_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  for (const stream of [child.stdout, child.stderr]) {
    let buffer = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (buffer + chunk).split('\n');
      buffer = parts.pop() ?? '';
      lines.push(...parts);
      for (const listener of listeners) listener();
    });
  }
  return {
    child,
    // A liveness bound, not a timing claim: a tsx start-up on a loaded two-core machine has
    // taken over 30 s, and a child that exits fails the wait at once anyway.
    waitForLine(pattern, timeoutMs = 180_000) {
      return new Promise((resolve, reject) => {
        const finish = (): void => {
          listeners.delete(check);
          clearTimeout(timer);
        };
        const check = (): void => {
          const match = lines.map((line) => line.match(pattern)).find((m) => m !== null);
          if (match) {
            finish();
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            finish();
            reject(new Error(`${path} exited before printing ${pattern}:\n${lines.join('\n')}`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`${path} did not print ${pattern} in ${timeoutMs} ms`));
        }, timeoutMs);
        listeners.add(check);
        void exited.then(check);
        check();
      });
    },
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
