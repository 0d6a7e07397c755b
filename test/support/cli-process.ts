/**
 * Child processes of the `leasehold` CLI for multi-process tests: started with the tsx loader,
 * their output collected line by line, waited on by pattern, and always killed at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';

const ROOT = new URL('../..', import.meta.url).pathname;

export interface CliProcess {
  readonly child: ChildProcess;
  readonly lines: string[];
  /** Resolves with the first match of `pattern` in the output (past or future). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves when the process has exited. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function startCli(args: string[], env: Record<string, string> = {}): CliProcess {
  return startScript(`${ROOT}src/cli/main.ts`, args, env);
}

/** Any TypeScript file of the repository as a child process (test fixtures, bench peers). */
export function startScript(
  path: string,
  args: string[],
  env: Record<string, string> = {},
): CliProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path, ...args], {
    cwd: ROOT,
    env: { ...process.env, LEASEHOLD_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
      for (const w of waiters) w();
    }),
  );
  for (const stream of [child.stdout, child.stderr]) {
    let buffer = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffer += chunk;
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      lines.push(...parts);
      for (const w of waiters) w();
    });
  }
  return {
    child,
    lines,
    exited: () => exit,
    kill: (signal = 'SIGTERM') => void child.kill(signal),
    waitForLine(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          for (const line of lines) {
            const match = line.match(pattern);
            if (match) {
              done();
              resolve(match);
              return;
            }
          }
          if (child.exitCode !== null || child.signalCode !== null) {
            done();
            reject(
              new Error(
                `process exited before printing ${pattern}:\n${lines.slice(-20).join('\n')}`,
              ),
            );
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(
              `no line matching ${pattern} within ${timeoutMs} ms:\n${lines.slice(-20).join('\n')}`,
            ),
          );
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}
