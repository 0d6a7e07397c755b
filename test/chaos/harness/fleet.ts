/**
 * The child processes of a run: started, restarted after a kill (a new incarnation, same name and
 * proxy port), stopped, stalled by command, and listened to. Every JSON line a child prints with
 * a `type` is an event of the run's history.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { ChildConfig, Role } from '../child/config.js';
import type { ChildEvent } from '../history.js';
import { wallNow } from '../wall-clock.js';
import { within } from '../../support/wait.js';

const CHILD_MAIN = new URL('../child/main.ts', import.meta.url).pathname;
const ROOT = new URL('../../..', import.meta.url).pathname;

export interface Member {
  proc: string;
  role: Role;
  incarnation: number;
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<void>;
  /** Resolves when the child reports the end of a stall. */
  onStalled?: () => void;
  stderr: string[];
}

export class Fleet {
  private readonly members = new Map<string, Member>();
  /** Every process ever started, for the leak check. */
  readonly started: { proc: string; pid: number }[] = [];
  /** Children that died without the harness killing them (restarted, as a supervisor would). */
  readonly crashes: { proc: string; incarnation: number; stderr: string[] }[] = [];
  private stopping = false;
  private readonly killed = new Set<ChildProcess>();

  constructor(
    private readonly configFor: (
      proc: string,
      role: Role,
      incarnation: number,
    ) => Promise<ChildConfig>,
    private readonly onEvent: (event: ChildEvent) => void,
  ) {}

  get procs(): Member[] {
    return [...this.members.values()];
  }

  member(proc: string): Member {
    const m = this.members.get(proc);
    if (!m) throw new Error(`no process ${proc}`);
    return m;
  }

  async start(proc: string, role: Role, incarnation = 0): Promise<Member> {
    const config = await this.configFor(proc, role, incarnation);
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD_MAIN], {
      cwd: ROOT,
      env: { ...process.env, CHAOS_CHILD: JSON.stringify(config) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.started.push({ proc, pid: child.pid ?? -1 });
    let markReady!: () => void;
    const member: Member = {
      proc,
      role,
      incarnation,
      child,
      ready: new Promise((resolve) => (markReady = resolve)),
      exited: new Promise((resolve) => child.once('exit', () => resolve())),
      stderr: [],
    };
    void member.exited.then(() => {
      if (this.stopping || this.killed.has(child)) return;
      this.crashes.push({ proc, incarnation, stderr: member.stderr.slice(-20) });
      void this.start(proc, role, incarnation + 1).catch(() => {});
    });
    child.stdin?.on('error', () => {}); // a killed child closes its stdin under us
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if ('stalled' in parsed) member.onStalled?.();
      else if (parsed['type'] === 'ready') markReady();
      if (typeof parsed['type'] === 'string') this.onEvent(parsed as unknown as ChildEvent);
    });
    createInterface({ input: child.stderr! }).on('line', (line) => {
      member.stderr.push(line);
      if (member.stderr.length > 50) member.stderr.shift();
    });
    this.members.set(proc, member);
    return member;
  }

  /** Kills `proc` for good and starts its next incarnation; resolves once that one is ready. */
  async restart(proc: string, readyTimeoutMs: number): Promise<void> {
    const old = this.member(proc);
    this.killed.add(old.child);
    old.child.kill('SIGKILL');
    await old.exited;
    const next = await this.start(proc, old.role, old.incarnation + 1);
    await within(next.ready, readyTimeoutMs, `${proc} restarted`);
  }

  signal(proc: string, signal: NodeJS.Signals): void {
    this.member(proc).child.kill(signal);
  }

  /** Busy-loops the child's event loop for `ms`; resolves (wall time) when it reports the end. */
  async stall(proc: string, ms: number): Promise<number> {
    const member = this.member(proc);
    const done = new Promise<void>((resolve) => (member.onStalled = resolve));
    member.child.stdin?.write(`stall ${Math.round(ms)}\n`);
    await within(done, ms + 10_000, `${proc} stall`).catch(() => {});
    member.onStalled = undefined;
    return wallNow();
  }

  /** SIGCONT (a stopped child cannot act on SIGTERM), SIGTERM, then SIGKILL after `graceMs`. */
  async stopAll(graceMs = 6_000): Promise<void> {
    this.stopping = true;
    const members = this.procs;
    for (const m of members) m.child.kill('SIGCONT');
    for (const m of members) m.child.kill('SIGTERM');
    await within(Promise.all(members.map((m) => m.exited)), graceMs, 'graceful stop').catch(() => {
      for (const m of members) m.child.kill('SIGKILL');
    });
    await Promise.all(members.map((m) => m.exited));
  }
}
