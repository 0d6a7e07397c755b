/**
 * The demo (`npm start`): the service in this process on an embedded PostgreSQL, three task
 * workers and two generator instances as child processes. One worker crashes on purpose now
 * and then and is restarted; its task's claim expires and another worker completes it. One
 * generator generates, the other stands by and takes over if the first dies. The service's
 * instance also runs the `queue-report` schedule in leader mode (queue-report.ts), so the
 * dashboard shows a live election and schedule.
 */
import type { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatDuration } from '../core/duration.js';
import type { LeaseholdFacade } from '../leasehold.js';
import type { TypedEvents } from '../runtime/events.js';
import type { ServiceEventMap } from '../service/context.js';
import type { RunningServer } from '../service/server.js';
import { TASKS_QUEUE, setGeneratorRunning } from '../tasks/task-domain.js';
import { startQueueReport } from './queue-report.js';
import { Supervisor } from './supervisor.js';

export interface DemoOptions {
  lh: LeaseholdFacade;
  server: RunningServer;
  /** The service's events (given to `startServer`): the demo counts the tasks handed back. */
  serviceEvents: TypedEvents<ServiceEventMap>;
  out: Writable;
  /** Children talk to the database directly (generators) or to the service (workers). */
  databaseUrl: string;
  schema: string;
  workers: number;
  crashRate: number;
  /** Task claim duration for the workers (ms). */
  leaseMs: number;
  generatorIntervalMs: number;
  generatorTtlMs: number;
  supervisor?: Supervisor;
}

export interface RunningDemo {
  readonly supervisor: Supervisor;
  /**
   * Stops the children (workers hand back their tasks, generators release their lease) and the
   * queue report; the service and the database are still up, for the caller to close after.
   */
  stop(): Promise<DemoStopReport>;
}

export interface DemoStopReport {
  /** Tasks the workers handed back to the queue (over the demo's life: they do so only on stop). */
  handedBack: number;
  /** Tasks still claimed once every worker has exited: none unless a worker had to be killed. */
  stillClaimed: number;
}

export async function startDemo(o: DemoOptions): Promise<RunningDemo> {
  const supervisor = o.supervisor ?? new Supervisor();
  const say = (line: string): void =>
    void o.out.write(`${new Date().toISOString().slice(11, 19)}  ${line}\n`);
  let handedBack = 0;
  o.serviceEvents.on('task:handed-back', () => handedBack++);
  supervisor.events.on('child:started', (e) => say(`${e.name} started (pid ${e.pid})`));
  supervisor.events.on('child:exited', (e) => {
    if (e.restarting)
      say(
        `${e.name} exited (${e.signal ?? `code ${e.code}`}); restarting it in ${formatDuration(e.restartInMs)}`,
      );
  });
  supervisor.events.on('child:output', (e) => {
    if (/crashing on purpose|generating on this instance/.test(e.line))
      say(`${e.name}: ${summary(e.line)}`);
  });

  await setGeneratorRunning(o.lh, true, 'demo');
  for (let i = 1; i <= 2; i++) {
    supervisor.start({
      name: `generator-${i}`,
      args: [
        'generate',
        '--instance-id',
        `generator-${i}`,
        '--interval',
        String(o.generatorIntervalMs),
        '--ttl',
        String(o.generatorTtlMs),
        '--schema',
        o.schema,
      ],
      env: { DATABASE_URL: o.databaseUrl, LEASEHOLD_LOG_LEVEL: 'info' },
    });
  }
  for (let i = 1; i <= o.workers; i++) {
    const crashy = i === o.workers && o.crashRate > 0;
    supervisor.start({
      name: `worker-${i}`,
      args: [
        'worker',
        '--url',
        o.server.url,
        '--worker-id',
        `worker-${i}`,
        '--lease',
        String(o.leaseMs),
        ...(crashy ? ['--crash-rate', String(o.crashRate)] : []),
      ],
      env: { LEASEHOLD_LOG_LEVEL: 'info' },
    });
  }
  const report = startQueueReport(o.lh, { log: say });
  say(`service and dashboard: ${o.server.url}/   API docs: ${o.server.url}/docs`);
  say(
    `${o.workers} workers (worker-${o.workers} crashes now and then), 2 generators (one generates, one stands by), a queue report every 10 s by the elected leader. Ctrl-C to stop.`,
  );
  return {
    supervisor,
    stop: async () => {
      say('stopping: workers hand back their tasks, generators release their lease');
      await Promise.all([supervisor.stop(), report.close()]);
      // Every worker has exited, and those that stopped handed their task back. A task still
      // claimed belongs to a worker that crashed on purpose: its claim runs out within one lease,
      // and the service's housekeeping (still running) puts it back in the queue. Waiting for
      // that lets "none left claimed" be true rather than true-unless-a-crash-was-recent.
      let stillClaimed = await countClaimed(o.lh);
      if (stillClaimed > 0) {
        const waitMs = o.leaseMs + CLAIM_RETURN_MARGIN_MS;
        say(
          `waiting up to ${formatDuration(waitMs)} for ${stillClaimed === 1 ? 'the claim of a task' : `the claims of ${stillClaimed} tasks`} whose worker crashed to run out`,
        );
        const deadline = performance.now() + waitMs;
        while (stillClaimed > 0 && performance.now() < deadline) {
          await sleep(CLAIM_POLL_MS);
          stillClaimed = await countClaimed(o.lh);
        }
      }
      return { handedBack, stillClaimed };
    },
  };
}

/** Beyond one lease: the housekeeping's interval and its rescue backoff, with room to spare. */
const CLAIM_RETURN_MARGIN_MS = 3_000;
const CLAIM_POLL_MS = 250;

async function countClaimed(lh: LeaseholdFacade): Promise<number> {
  const claimed = await lh.jobs.list({ queue: TASKS_QUEUE, status: 'processing', limit: 1_000 });
  return claimed.length;
}

/** The message of a JSON log line, or the line itself. */
function summary(line: string): string {
  try {
    const parsed = JSON.parse(line) as { msg?: string };
    return parsed.msg ?? line;
  } catch {
    return line;
  }
}
