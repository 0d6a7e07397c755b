/**
 * One chaos run, start to finish: a database, a proxy, a fleet of children, a seeded fault plan,
 * a steady trickle of jobs; then a quiet settling phase, an orderly stop, the database facts, and
 * every checker over the history.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Leasehold } from '../../../src/leasehold.js';
import { checkHistory } from '../checkers/index.js';
import type { ChildConfig, Role } from '../child/config.js';
import type {
  ChildEvent,
  ExplainedLoss,
  FaultRecord,
  FaultType,
  History,
  QueueLimits,
  ReplicationMode,
  RunBounds,
  Violation,
} from '../history.js';
import { explainFailoverLosses } from '../checkers/failover-losses.js';
import { checkLinearizability, type LinearizabilityStats } from '../checkers/linearizable.js';
import { seededRandom } from '../random.js';
import { createEngine, type Variant } from '../variants/index.js';
import { wallNow } from '../wall-clock.js';
import { openChaosDatabase, readDurability, type ChaosDatabase } from './chaos-database.js';
import type { FailoverCluster } from './failover-cluster.js';
import { prepareChaosSchema } from './chaos-schema.js';
import { readDbFacts } from './db-facts.js';
import { installEnqueueStall, readEnqueuedFacts } from './enqueue-facts.js';
import { injectFault } from './fault-injector.js';
import { planFaults } from './fault-plan.js';
import { FaultProxy } from './fault-proxy.js';
import { within } from '../../support/wait.js';
import { Fleet } from './fleet.js';

export interface ChaosOptions {
  seed: number;
  /** Length of the faulty phase. */
  durationMs: number;
  variant: Variant;
  roles: Partial<Record<Role, number>>;
  faultTypes: readonly FaultType[];
  faultGapMs?: readonly [number, number];
  /** Range of a freeze (sigstop, stall, proxy-blackhole); default the lease ttl + 0.3 to 1.8 s. */
  freezeMs?: readonly [number, number];
  faultWeights?: Partial<Record<FaultType, number>>;
  /** Range of the added latency per chunk of proxy-latency faults. */
  latencyMs?: readonly [number, number];
  /** Each holder gets a lease of its own instead of all competing for one. */
  privateLeases?: boolean;
  /** Use this server instead of an embedded one (pg-restart is then skipped). */
  databaseUrl?: string;
  /**
   * Run against a Patroni HA cluster (two members behind haproxy) with this replication instead
   * of one embedded server: the failover, switchover and standby-lag faults need it.
   */
  failover?: ReplicationMode;
  /** Share of standby-lag faults that end in a failover while replication is held (default 0.5). */
  lagFailoverChance?: number;
  /** Milliseconds between two enqueue calls. */
  jobEveryMs?: number;
  /** Jobs per enqueue call (default 1). */
  jobsPerEnqueue?: number;
  /** Range of each job's work in ms (default 100–500). */
  jobWorkMs?: readonly [number, number];
  /** Range of each workflow step's work in ms (default 20–200). */
  workflowWorkMs?: readonly [number, number];
  /** Milliseconds between two workflow enqueues (default WORKFLOW_EVERY_MS). */
  workflowEveryMs?: number;
  /** Slots per worker (default 2). */
  workerConcurrency?: number;
  /** Holders' quick acquire/release cycles on shared resources (default none). */
  churn?: { resources: number; loops: number };
  /**
   * Run the limited queues (LIMITED_QUEUES) beside the plain one when there are workers
   * (default true).
   */
  limitedQueues?: boolean;
  log?: (line: string) => void;
}

export interface ChaosResult {
  history: History;
  violations: Violation[];
  /** Acknowledgements lost to asynchronous failovers: counted and explained, not violations. */
  losses: ExplainedLoss[];
  acquisitions: number;
  jobs: number;
  faults: FaultRecord[];
  /** The server's fsync, synchronous_commit and full_page_writes, as SHOW gave them at the start. */
  durability: string;
  /** What the linearizability checker covered (its violations are among `violations`). */
  linearizability: LinearizabilityStats;
}

const LEASE = { ttlMs: 1_500, renewEveryMs: 400, marginMs: 400 };
const ELECTION = { name: 'chaos-leader', ttlMs: 1_500, renewEveryMs: 400, pollEveryMs: 300 };
const WORKER = { queue: 'chaos', leaseTtlMs: 1_200, concurrency: 2 };
const SCHEDULE = { name: 'chaos-tick', everyMs: 1_000 };
/**
 * The workflow role's queue (issue 28): every WORKFLOW_EVERY_MS the harness enqueues a
 * three-step job or, every other time, a flow of a parent and three children.
 */
const WORKFLOW = { queue: 'chaos-workflow', leaseTtlMs: 1_200, concurrency: 4 };
const WORKFLOW_EVERY_MS = 300;

/**
 * A queue with flow control (decision 0239), configured before the children start and served
 * by every worker process with `localConcurrency` slots, above its cap: only the database's
 * claim keeps the fleet within the limits. Every `everyMs` the harness enqueues `jobs` jobs
 * at once (spread round-robin over `keys` partition keys when set), each working `workMs`.
 */
export interface LimitedQueue {
  limits: QueueLimits;
  localConcurrency: number;
  everyMs: number;
  jobs: number;
  keys?: number;
  workMs: readonly [number, number];
}

/**
 * The limited queues of a run. Arrivals come in bursts so that each limit binds now and then
 * (three jobs at once against a cap of three with some still running; two per key at once
 * against two per key; eight at once against five per second), while the mean load stays
 * below the limits so the backlog drains in the quiet phase.
 */
export const LIMITED_QUEUES: readonly LimitedQueue[] = [
  {
    limits: { queue: 'chaos-capped', concurrency: 3, perKeyConcurrency: 1, rate: null },
    localConcurrency: 4,
    everyMs: 500,
    jobs: 3,
    workMs: [200, 600],
  },
  {
    limits: { queue: 'chaos-keyed', concurrency: null, perKeyConcurrency: 2, rate: null },
    localConcurrency: 4,
    everyMs: 500,
    jobs: 4,
    keys: 2,
    workMs: [200, 600],
  },
  {
    limits: {
      queue: 'chaos-rated',
      concurrency: null,
      perKeyConcurrency: 1,
      rate: { limit: 5, per: 1_000 },
    },
    localConcurrency: 4,
    everyMs: 2_000,
    jobs: 8,
    workMs: [50, 200],
  },
];
const SETTLE_MS = 20_000;

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const log = options.log ?? (() => {});
  const random = seededRandom(options.seed);
  let cluster: FailoverCluster | undefined;
  let database: ChaosDatabase;
  if (options.failover) {
    // Loaded only for a failover run: the normal run needs none of the HA tooling.
    const { openFailoverCluster } = await import('./ha-failover-cluster.js');
    cluster = await openFailoverCluster(options.failover, log);
    database = cluster.database;
  } else database = await openChaosDatabase(options.databaseUrl);
  const schema = `chaos_${options.seed}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Pool({
    connectionString: database.url,
    max: 3,
    application_name: 'chaos-harness',
  });
  admin.on('error', () => {});
  const proxy = new FaultProxy(database.host, database.port);
  const events: ChildEvent[] = [];
  const faults: FaultRecord[] = [];
  let fleet: Fleet | undefined;
  let producer: Leasehold | undefined;
  try {
    const durability =
      (await readDurability(admin)) + (cluster ? `; ${await cluster.describeReplication()}` : '');
    log(`database: ${durability}`);
    const setup = createEngine(options.variant, {
      connectionString: database.url,
      schema,
      poolSize: 2,
    });
    await prepareChaosSchema(setup);
    const workers = options.roles.worker ?? 0;
    const limited = workers > 0 && options.limitedQueues !== false ? LIMITED_QUEUES : [];
    // Through the variant under test: a broken one may keep the settings from the database.
    const configurer = Leasehold.fromEngine(setup);
    for (const { limits } of limited)
      await configurer.queue(limits.queue).configure({
        concurrency: limits.concurrency,
        perKeyConcurrency: limits.perKeyConcurrency,
        rate: limits.rate,
      });
    await configurer.close();
    await installEnqueueStall(admin, schema);
    const before = wallNow();
    const [{ now }] = (await admin.query<{ now: Date }>('SELECT now()')).rows as [{ now: Date }];
    const dbClockOffsetMs = now.getTime() - (before + wallNow()) / 2;

    const configFor = async (
      proc: string,
      role: Role,
      incarnation: number,
    ): Promise<ChildConfig> => {
      const port = await proxy.portFor(proc);
      const url = new URL(database.url);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return {
        role,
        proc,
        incarnation,
        databaseUrl: url.toString(),
        schema,
        variant: options.variant,
        lease: {
          resource: options.privateLeases ? `chaos-lease-${proc}` : 'chaos-lease',
          ...LEASE,
        },
        sessionLock: 'chaos-session',
        churn: options.churn
          ? {
              resources: Array.from({ length: options.churn.resources }, (_, i) => `churn-${i}`),
              loops: options.churn.loops,
              ttlMs: LEASE.ttlMs,
            }
          : null,
        election: ELECTION,
        worker: {
          ...WORKER,
          concurrency: options.workerConcurrency ?? WORKER.concurrency,
          limited: limited.map((l) => ({
            queue: l.limits.queue,
            concurrency: l.localConcurrency,
          })),
        },
        schedule: SCHEDULE,
        workflow: WORKFLOW,
      };
    };
    fleet = new Fleet(configFor, (e) => events.push(e));
    const procs: string[] = [];
    for (const role of [
      'holder',
      'leader',
      'worker',
      'scheduler',
      'producer',
      'service',
      'workflow',
    ] as const) {
      for (let i = 1; i <= (options.roles[role] ?? 0); i++) {
        const proc = `${role}-${i}`;
        procs.push(proc);
        await fleet.start(proc, role);
      }
    }
    // Ten tsx processes starting at once on a loaded two-core machine can take minutes.
    await within(Promise.all(fleet.procs.map((m) => m.ready)), 180_000, 'every child ready');
    log(`${procs.length} processes ready`);

    const workflows = options.roles.workflow ?? 0;
    producer =
      workers > 0 || workflows > 0
        ? Leasehold.fromEngine(
            // The variant under test: a broken one may lose acknowledged enqueues too.
            createEngine(options.variant, { connectionString: database.url, schema, poolSize: 2 }),
          )
        : undefined;
    let enqueueing = true;
    const enqueuer = (async () => {
      while (enqueueing && producer && workers > 0) {
        const [least, most] = options.jobWorkMs ?? [100, 500];
        const jobs = Array.from({ length: options.jobsPerEnqueue ?? 1 }, () => ({
          payload: { workMs: random.int(least, most) },
        }));
        await producer
          .queue(WORKER.queue)
          .enqueueMany(jobs)
          .then((answered) => events.push(enqueueAcknowledged(answered)))
          .catch(() => {}); // the database may be restarting
        await sleep(options.jobEveryMs ?? 250);
      }
    })();

    // The limited queues' bursts, on their own timers (a random stream of their own, so the
    // fault plan of a seed stays what it was before they existed).
    const limitedRandom = seededRandom(options.seed + 1);
    const limitedEnqueuers = limited.map(async (l) => {
      let burst = 0;
      while (enqueueing && producer) {
        const jobs = Array.from({ length: l.jobs }, (_, i) => ({
          payload: { workMs: limitedRandom.int(l.workMs[0], l.workMs[1]) },
          ...(l.keys ? { options: { partitionKey: `k${(burst * l.jobs + i) % l.keys}` } } : {}),
        }));
        burst++;
        await producer
          .queue(l.limits.queue)
          .enqueueMany(jobs)
          .then((answered) => events.push(enqueueAcknowledged(answered)))
          .catch(() => {});
        await sleep(l.everyMs);
      }
    });

    // The workflow role's jobs and flows, on a random stream of their own (the fault plan of a
    // seed stays what it was before the role existed).
    const workflowRandom = seededRandom(options.seed + 2);
    const workflowEnqueuer = (async () => {
      for (let n = 0; enqueueing && producer && workflows > 0; n++) {
        const [least, most] = options.workflowWorkMs ?? [20, 200];
        const workMs = (): number => workflowRandom.int(least, most);
        const queue = producer.queue(WORKFLOW.queue);
        await (
          n % 2 === 0
            ? queue.enqueue({ workMs: workMs() })
            : queue.enqueueFlow({
                payload: { parent: true, workMs: workMs() },
                children: Array.from({ length: 3 }, () => ({
                  queue: WORKFLOW.queue,
                  payload: { workMs: workMs() },
                })),
              })
        ).catch(() => {}); // the database may be restarting
        await sleep(options.workflowEveryMs ?? WORKFLOW_EVERY_MS);
      }
    })();

    const plan = planFaults(random, {
      durationMs: options.durationMs,
      types: options.faultTypes,
      targets: procs,
      gapMs: options.faultGapMs ?? [1_000, 2_500],
      freezeMs: options.freezeMs ?? [LEASE.ttlMs + 300, LEASE.ttlMs + 1_800],
      weights: options.faultWeights,
      latencyMs: options.latencyMs,
      lagFailoverChance: options.lagFailoverChance,
    });
    const started = Date.now();
    for (const [index, fault] of plan.entries()) {
      const wait = started + fault.atMs - Date.now();
      if (wait > 0) await sleep(wait);
      // The first round (every fault type once) runs however slow the machine is: on a loaded
      // one a few child restarts can take the whole faulty phase, and a type never injected is
      // a type not tested.
      if (Date.now() - started > options.durationMs && index >= options.faultTypes.length) break;
      const record = await injectFault({ fleet, proxy, database, admin, cluster }, fault);
      faults.push(record);
      log(
        `fault ${record.type} ${record.target ?? ''} ${record.skipped ? `skipped: ${record.skipped}` : `${Math.round(record.endedAt - record.startedAt)} ms`}${record.detail ? ` (${record.detail})` : ''}`,
      );
    }
    const remaining = started + options.durationMs - Date.now();
    if (remaining > 0) await sleep(remaining);
    enqueueing = false;
    await Promise.all([enqueuer, workflowEnqueuer, ...limitedEnqueuers]);
    const queues = [WORKER.queue, ...limited.map((l) => l.limits.queue)];
    const settling = workflows > 0 ? [...queues, WORKFLOW.queue] : queues;

    // Quiet phase: no faults, so every job can reach its end. It lasts while the workers make
    // progress (a loaded machine can leave a backlog) and ends after SETTLE_MS without any.
    let settleBy = Date.now() + (workers > 0 || workflows > 0 ? SETTLE_MS : 0);
    let unfinished = Number.POSITIVE_INFINITY;
    while (Date.now() < settleBy) {
      const counted = await admin
        .query<{ n: string }>(
          `SELECT count(*) AS n FROM "${schema}".jobs WHERE queue = ANY($1::text[]) AND status NOT IN ('completed', 'dead')`,
          [settling],
        )
        .catch(() => undefined); // through haproxy: a connection the last promotion broke
      if (!counted) {
        await sleep(250);
        continue;
      }
      const n = Number(counted.rows[0]!.n);
      if (n === 0) break;
      if (n < unfinished) [unfinished, settleBy] = [n, Date.now() + SETTLE_MS];
      await sleep(250);
    }
    await producer?.close();
    producer = undefined;
    await fleet.stopAll();
    const facts = await readDbFacts({
      pool: admin,
      schema,
      queues,
      // Behind haproxy the server sees haproxy's ports, not the proxy's: every leasehold
      // session of the database counts (nothing else uses it).
      proxyPorts: cluster ? null : () => proxy.everUsedPorts(),
      proxyOpenConnections: () => proxy.openConnections(),
      children: fleet.started,
      ...(workflows > 0 ? { workflowQueue: WORKFLOW.queue } : {}),
    });
    facts.enqueued = await readEnqueuedFacts(admin, schema);
    const bounds: RunBounds = {
      electionName: ELECTION.name,
      electionTtlMs: ELECTION.ttlMs,
      electionPollMs: ELECTION.pollEveryMs,
      takeoverSlackMs: 1_000,
      dbClockOffsetMs,
    };
    const history: History = {
      seed: options.seed,
      variant: options.variant,
      durationMs: options.durationMs,
      events: events.sort((a, b) => a.t - b.t),
      faults,
      facts,
      bounds,
      crashes: fleet.crashes,
      ...(options.failover ? { replication: options.failover } : {}),
      limits: limited.map((l): QueueLimits => l.limits),
    };
    const explained = explainFailoverLosses(history, checkHistory(history));
    const { losses } = explained;
    const linearizability = checkLinearizability(history);
    const violations = [...explained.violations, ...linearizability.violations];
    if (violations.length === 0) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    return {
      history,
      violations,
      losses,
      acquisitions: countAcquisitions(events),
      jobs: facts.jobs.length,
      faults,
      durability,
      linearizability: linearizability.stats,
    };
  } finally {
    await producer?.close().catch(() => {});
    await fleet?.stopAll().catch(() => {});
    await proxy.close();
    await admin.end().catch(() => {});
    await database.close();
    await cluster?.close();
  }
}

/** The producer's record of an answered enqueue, for the "acknowledged, then lost" checker. */
function enqueueAcknowledged(answered: readonly { id: number }[]): ChildEvent {
  const jobIds = answered.map((job) => job.id);
  return {
    type: 'enqueue-ack',
    jobIds,
    proc: 'producer',
    incarnation: 0,
    pid: process.pid,
    t: wallNow(),
  };
}

/** New terms granted: lease and lease-lock acquisitions (not a holder extending its own), session grants. */
function countAcquisitions(events: readonly ChildEvent[]): number {
  const terms = new Set<string>();
  for (const e of events) {
    if (e.type === 'lease-op' && e.op === 'acquire' && e.ok)
      terms.add(`${e.family}|${e.resource}|${e.holder}|${e.token}`);
    if (e.type === 'session-term' && e.phase === 'granted')
      terms.add(`session|${e.holder}|${e.token}`);
  }
  return terms.size;
}
