/**
 * One child process of a chaos run. It connects through the harness's proxy, runs one role, and
 * reports its history as JSON lines on stdout. The harness controls it by signals (SIGKILL,
 * SIGSTOP/SIGCONT, SIGTERM to stop) and by commands on stdin: `stall <ms>` busy-loops the event
 * loop for that long, as a long synchronous computation or a GC pause would.
 */
import { createInterface } from 'node:readline';
import { Leasehold } from '../../../src/leasehold.js';
import { createEngine } from '../variants/index.js';
import { wallNow } from '../wall-clock.js';
import type { ChildConfig } from './config.js';
import { emitterFor } from './emit.js';
import { recordingEngine } from './recording-engine.js';
import { runHolder } from './roles/holder.js';
import { runLeader } from './roles/leader.js';
import { runProducer } from './roles/producer.js';
import { runScheduler } from './roles/scheduler.js';
import { runService } from './roles/service.js';
import { runWorker } from './roles/worker.js';
import { runWorkflow } from './roles/workflow.js';

const config = JSON.parse(process.env['CHAOS_CHILD'] ?? '') as ChildConfig;
const emit = emitterFor(config.proc, config.incarnation);
const engine = createEngine(config.variant, {
  connectionString: config.databaseUrl,
  schema: config.schema,
  poolSize: 6,
  // Short, so a blackholed proxy turns into errors the library handles, not hangs.
  connectTimeoutMs: 2_000,
});
const lh = Leasehold.fromEngine(recordingEngine(engine, emit));
const target = {
  lh,
  pool: engine.pool,
  schema: config.schema,
  emit,
  proc: config.proc,
  incarnation: config.incarnation,
};
let running = true;

createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, arg] = line.trim().split(/\s+/);
  if (command !== 'stall') return;
  const until = wallNow() + Number(arg);
  while (wallNow() < until) {
    // Busy: no timer, no I/O callback of this process runs meanwhile.
  }
  process.stdout.write(`${JSON.stringify({ stalled: Number(arg) })}\n`);
});

process.once('SIGTERM', () => {
  running = false;
  const forced = setTimeout(() => process.exit(1), 5_000);
  forced.unref();
  void lh.close().finally(() => process.exit(0));
});

switch (config.role) {
  case 'holder':
    runHolder(config, target, () => running);
    break;
  case 'leader':
    await runLeader(config, target);
    break;
  case 'worker':
    await runWorker(config, target);
    break;
  case 'scheduler':
    runScheduler(config, target);
    break;
  case 'producer':
    runProducer(config, target, () => running);
    break;
  case 'service':
    await runService(config, target, () => running);
    break;
  case 'workflow':
    await runWorkflow(config, target);
    break;
}
emit({ type: 'ready' });
