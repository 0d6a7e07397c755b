/**
 * Runs child processes of this same CLI and restarts the ones that die, until stopped. Used by
 * the demo, whose workers crash on purpose. `stop()` sends SIGTERM, waits for a clean exit up
 * to a grace period, then SIGKILLs whatever is left, so nothing outlives the supervisor.
 *
 * A child that keeps dying soon after it starts is restarted later each time (crash-loop
 * backoff, as systemd and Kubernetes do): restarted at once, a worker that dies on every task
 * is idle again the moment its own task is rescued and takes it back, so the task spends its
 * attempts on the one worker that cannot finish it.
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
  'child:exited': {
    name: string;
    code: number | null;
    signal: string | null;
    restarting: boolean;
    /** When restarting: the wait before the child starts again. */
    restartInMs: number;
  };
  'child:output': { name: string; line: string };
  [name: string]: unknown;
}

interface Running {
  spec: ChildSpec;
  process: ChildProcess;
  restarts: number;
}

export interface RestartPolicy {
  /** Wait before restarting a child that lived a while, and the first step of the backoff. */
  delayMs: number;
  /** The backoff doubles per consecutive short life up to this. */
  maxDelayMs: number;
  /** A child that lived this long was healthy: its next restart waits `delayMs` again. */
  healthyAfterMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  delayMs: 500,
  maxDelayMs: 8_000,
  healthyAfterMs: 30_000,
};

/** The wait before a restart after `shortLives` consecutive lives shorter than healthy. */
export function restartDelay(policy: RestartPolicy, shortLives: number): number {
  return Math.min(policy.maxDelayMs, policy.delayMs * 2 ** Math.max(0, shortLives - 1));
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
    private readonly restartPolicy: RestartPolicy = DEFAULT_RESTART_POLICY,
  ) {}

  start(spec: ChildSpec): void {
    this.launch(spec, 0, 0);
  }

  private launch(spec: ChildSpec, restarts: number, shortLivesBefore: number): void {
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
    const startedAt = Date.now();
    child.once('exit', (code, signal) => {
      const restarting = !this.stopping;
      const lived = Date.now() - startedAt;
      const shortLives = lived < this.restartPolicy.healthyAfterMs ? shortLivesBefore + 1 : 0;
      const restartInMs = restartDelay(this.restartPolicy, shortLives);
      this.events.emit('child:exited', { name: spec.name, code, signal, restarting, restartInMs });
      this.running.delete(spec.name);
      if (restarting)
        setTimeout(() => this.launch(spec, restarts + 1, shortLives), restartInMs).unref();
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
