/**
 * Runs a PostgreSQL server the way a command-line program needs it run: in a process group of
 * its own, so the terminal's Ctrl-C (SIGINT to the foreground group) does not reach it and the
 * program can stop it last, after its own clients have finished; and watched by a small guardian
 * process that stops it when the program goes, however the program goes.
 *
 * PostgreSQL does not notice its parent dying: a program killed with SIGKILL (or crashed) would
 * leave an orphan postmaster holding the data directory and port. The guardian holds the read end
 * of a pipe whose write end only the program holds: end-of-file on it (an orderly `stop()`, or the
 * program's death, which the kernel turns into end-of-file) makes it stop the server with a fast
 * shutdown, then remove the data directory when the cluster was throwaway.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface GuardedServerSpec {
  /** The `postgres` executable and its arguments. */
  command: string;
  args: string[];
  /** Run the server as this user and group (the `postgres` user when we are root). */
  uid?: number;
  gid?: number;
  env: NodeJS.ProcessEnv;
  /** Removed by the guardian after a stop it performed (a throwaway cluster); kept otherwise. */
  removeOnStop?: string;
}

export interface GuardedServer {
  /** The guardian's pid; the postmaster is its child, in the same (new) process group. */
  readonly guardianPid: number;
  /** The guardian process: the server's log arrives on its stderr. */
  readonly process: ChildProcess;
  /** Ends the guardian's input: the server gets a fast shutdown; resolves once both have exited. */
  stop(): Promise<void>;
  /** Resolves when the guardian has exited (the server has exited first). */
  readonly exited: Promise<void>;
}

/**
 * The guardian, run with `node -e` so it needs no file of ours on disk (the same source works
 * from `src/` under tsx and from `dist/`). CommonJS, plain JavaScript, no dependencies.
 * Signals other than end-of-input also stop the server: the guardian is in a group of its own,
 * so only a deliberate `kill` of it sends one.
 */
const GUARDIAN_SOURCE = `
const { spawn } = require('node:child_process');
const { rmSync } = require('node:fs');
const spec = JSON.parse(process.argv[1]);
const server = spawn(spec.command, spec.args, {
  stdio: ['ignore', 'inherit', 'inherit'],
  env: spec.env,
  ...(spec.uid === undefined ? {} : { uid: spec.uid, gid: spec.gid }),
});
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  server.kill('SIGINT');
};
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.on('error', stop);
process.stdin.resume();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, stop);
server.on('error', (error) => {
  process.stderr.write('guardian: ' + String(error) + '\\n');
  process.exit(1);
});
server.on('exit', (code, signal) => {
  if (stopping && spec.removeOnStop) rmSync(spec.removeOnStop, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
`;

export function startGuardedServer(spec: GuardedServerSpec): GuardedServer {
  const guardian = spawn(process.execPath, ['-e', GUARDIAN_SOURCE, JSON.stringify(spec)], {
    // A process group of its own: a terminal's Ctrl-C goes to the foreground group, not here.
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    // Plain node: no loader flags from this process (tsx), which the guardian does not need.
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const exited = new Promise<void>((resolve) => {
    if (guardian.exitCode !== null || guardian.signalCode !== null) resolve();
    else guardian.once('exit', () => resolve());
  });
  // Writing nothing is the point: the pipe only carries its end. An EPIPE after the guardian
  // died on its own must not become an uncaught error in this process.
  guardian.stdin?.on('error', () => {});
  let stopped: Promise<void> | undefined;
  return {
    guardianPid: guardian.pid ?? -1,
    process: guardian,
    exited,
    stop() {
      stopped ??= (async () => {
        guardian.stdin?.end();
        await exited;
      })();
      return stopped;
    },
  };
}
