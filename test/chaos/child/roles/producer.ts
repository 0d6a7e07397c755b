/**
 * A producer on the coalesced single-enqueue path (queue.enqueue outside a transaction): every
 * tick it makes a burst of overlapping calls, so they share statements (runtime/coalescer.ts),
 * on a few partition keys of its own. Each logical enqueue carries its own id (`opId`) and its
 * place in its partition's call order (`seq`) in the payload, so the checkers can find a job
 * created twice (enqueue-duplicates.ts) and a partition created out of call order
 * (partition-order.ts). Some jobs stall their INSERT in the database (a trigger sleeps on
 * `stallMs`, enqueue-stall.ts) longer than the coalescer's stall limit, the case in which a later
 * statement may go first. Jobs go to a queue no worker serves: what is checked is creation.
 *
 * Variant `unordered-enqueue` sends the calls through a coalescer built as before decision 0220
 * (no order keys, variants/unordered-enqueue.ts), to prove the order checker.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from '../../../../src/queue/queue.js';
import { unorderedSingles } from '../../variants/unordered-enqueue.js';
import type { ChildConfig } from '../config.js';
import type { IncrementTarget } from '../fenced-increment.js';

/** The queue the producer fills; no worker serves it. */
export const PRODUCER_QUEUE = 'chaos-enqueue';
const PARTITIONS = 3;
const BURST = 3;
const TICK_MS = 120;

export function runProducer(
  config: ChildConfig,
  target: IncrementTarget,
  running: () => boolean,
): void {
  const { lh, emit } = target;
  const queue =
    config.variant === 'unordered-enqueue'
      ? new Queue(lh.engine, PRODUCER_QUEUE, unorderedSingles(lh.engine))
      : lh.queue(PRODUCER_QUEUE);
  const prefix = `${config.proc}#${config.incarnation}`;
  const seqs = new Array<number>(PARTITIONS).fill(0);
  let ops = 0;
  void (async () => {
    while (running()) {
      for (let i = 0; i < BURST; i++) {
        const p = Math.floor(Math.random() * PARTITIONS);
        const part = `${prefix}/p${p}`;
        const seq = ++seqs[p]!;
        const opId = `${prefix}:${++ops}`;
        const stallMs = Math.random() < 0.15 ? 60 + Math.floor(Math.random() * 100) : undefined;
        emit({ type: 'enqueue', phase: 'invoke', opId, part, seq });
        queue
          .enqueue({ opId, part, seq, ...(stallMs ? { stallMs } : {}) }, { partitionKey: part })
          .then(
            (job) => emit({ type: 'enqueue', phase: 'ok', opId, part, seq, jobId: job.id }),
            (error: { code?: string; details?: { outcome?: unknown } }) =>
              emit({
                type: 'enqueue',
                phase: 'fail',
                opId,
                part,
                seq,
                error: `${error?.code ?? 'error'}${error?.details?.outcome === 'unknown' ? ' (outcome unknown)' : ''}`,
              }),
          );
      }
      await sleep(TICK_MS);
    }
  })();
}
