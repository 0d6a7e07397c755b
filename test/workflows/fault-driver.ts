/**
 * Worker processes under random process faults, for the workflow tests: a seeded plan of
 * SIGKILLs (the process is started again, as a supervisor would) and SIGSTOPs held past the
 * lease (then SIGCONT), one fault at a time, until the test says stop.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { startScript, type CliProcess } from '../support/cli-process.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';
import { seededRandom } from '../chaos/random.js';

const FIXTURE = new URL('./fixtures/workflow-worker.ts', import.meta.url).pathname;

export interface FaultCounts {
  kills: number;
  stops: number;
}

export class WorkerFleet {
  private readonly procs: CliProcess[] = [];
  private readonly everyProc: CliProcess[] = [];
  readonly faults: FaultCounts = { kills: 0, stops: 0 };
  private faulting = false;
  private driver: Promise<void> | undefined;

  constructor(
    private readonly env: Record<string, string>,
    private readonly leaseMs: number,
  ) {}

  async start(count: number): Promise<void> {
    for (let i = 0; i < count; i++) this.procs.push(this.spawn());
    await Promise.all(this.procs.map((p) => p.waitForLine(/"event":"ready"/, EVENT_TIMEOUT_MS)));
  }

  /** Starts injecting faults: one every 0.5 to 1.2 s, a kill or a freeze past the lease. */
  startFaults(seed: number): void {
    const random = seededRandom(seed);
    this.faulting = true;
    this.driver = (async () => {
      while (this.faulting) {
        await sleep(random.int(500, 1_200));
        if (!this.faulting) break;
        const index = random.int(0, this.procs.length - 1);
        const proc = this.procs[index]!;
        if (random.chance(0.5)) {
          proc.kill('SIGKILL');
          this.faults.kills++;
          await proc.exited();
          const next = this.spawn();
          this.procs[index] = next;
          await next.waitForLine(/"event":"ready"/, EVENT_TIMEOUT_MS);
        } else {
          proc.kill('SIGSTOP');
          this.faults.stops++;
          // Just past the lease: the maintainer rescues its jobs and another process takes them,
          // and the frozen one often wakes while that process is still in the same step (the
          // race a step's guard exists for).
          await sleep(this.leaseMs + random.int(100, 900));
          proc.kill('SIGCONT');
        }
      }
    })();
  }

  async stopFaults(): Promise<void> {
    this.faulting = false;
    await this.driver;
  }

  killAll(): void {
    for (const p of this.everyProc) {
      p.kill('SIGCONT');
      p.kill('SIGKILL');
    }
  }

  private spawn(): CliProcess {
    const proc = startScript(FIXTURE, [], this.env);
    this.everyProc.push(proc);
    return proc;
  }
}
