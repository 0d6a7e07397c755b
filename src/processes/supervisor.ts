/**
 * Runs child processes of this same CLI and restarts the ones that die, until stopped. Used by
 * the demo, whose workers crash on purpose. `stop()` sends SIGTERM, waits for a clean exit up
 * to a grace period, then SIGKILLs whatever is left, so nothing outlives the supervisor.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { TypedEvents } from '../runtime/events.js';

export interface ChildSpec {
  name: string;
  /** Arguments after the CLI entry, e.g. ['worker', '--url', …]. */
  args: string[];
  env?: Record<string, string>;
}

export interface SupervisorEvents {
  'child:started': { name: string; pid: number; restarts: number };
  'child:exited': { name: string; code: number | null; signal: string | null; restarting: boolean };
  'child:output': { name: string; line: string };
  [name: string]: unknown;
}

interface Running {
  spec: ChildSpec;
  process: ChildProcess;
  restarts: number;
}

export class Supervisor {
  readonly events = new TypedEvents<SupervisorEvents>();
  private readonly running = new Map<string, Running>();
  private stopping = false;

  constructor(
    /** How to start this CLI again: node, its flags (e.g. the tsx loader) and the entry file. */
    private readonly command: { execPath: string; execArgv: string[]; entry: string } = {
      execPath: process.execPath,
      execArgv: process.execArgv,
      entry: process.argv[1] ?? '',
    },
    private readonly restartDelayMs = 500,
  ) {}

  start(spec: ChildSpec, restarts = 0): void {
    if (this.stopping) return;
    const child = spawn(
      this.command.execPath,
      [...this.command.execArgv, this.command.entry, ...spec.args],
      // stdin is a pipe we never write to: when this process dies, however it dies, the child
      // reads end-of-file and shuts down (see cli/shutdown.ts) instead of living on orphaned.
      {
        env: { ...process.env, ...spec.env, LEASEHOLD_SUPERVISED: '1' },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    this.running.set(spec.name, { spec, process: child, restarts });
    for (const stream of [child.stdout, child.stderr]) {
      let buffered = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines)
          if (line.trim()) this.events.emit('child:output', { name: spec.name, line });
      });
    }
    this.events.emit('child:started', { name: spec.name, pid: child.pid ?? -1, restarts });
    child.once('exit', (code, signal) => {
      const restarting = !this.stopping;
      this.events.emit('child:exited', { name: spec.name, code, signal, restarting });
      this.running.delete(spec.name);
      if (restarting) setTimeout(() => this.start(spec, restarts + 1), this.restartDelayMs).unref();
    });
  }

  pids(): number[] {
    return [...this.running.values()].map((r) => r.process.pid ?? -1).filter((p) => p > 0);
  }

  async stop(graceMs = 8_000): Promise<void> {
    this.stopping = true;
    const exits = [...this.running.values()].map(
      (r) =>
        new Promise<void>((resolve) => {
          if (r.process.exitCode !== null || r.process.signalCode !== null) return resolve();
          const timer = setTimeout(() => r.process.kill('SIGKILL'), graceMs);
          r.process.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          r.process.kill('SIGTERM');
        }),
    );
    await Promise.all(exits);
  }
}
