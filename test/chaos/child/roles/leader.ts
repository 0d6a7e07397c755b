/** An election candidate: while it leads, it does fenced increments under its leadership token. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildConfig } from '../config.js';
import { codeOf, fencedIncrement, type IncrementTarget } from '../fenced-increment.js';

export async function runLeader(config: ChildConfig, target: IncrementTarget): Promise<void> {
  const { name, ttlMs, renewEveryMs, pollEveryMs } = config.election;
  const resource = `leasehold:election:${name}`;
  const instanceId = `${config.proc}#${config.incarnation}`;
  const election = target.lh.elect(name, {
    ttl: ttlMs,
    renewEvery: renewEveryMs,
    pollEvery: pollEveryMs,
    instanceId,
    onElected: (token, signal) => {
      signal.addEventListener('abort', () =>
        target.emit({
          type: 'signal',
          resource,
          holder: instanceId,
          token,
          reason: codeOf(signal.reason),
        }),
      );
      void (async () => {
        while (!signal.aborted) {
          await fencedIncrement(target, `leader:${name}`, token);
          await sleep(50 + Math.random() * 100);
        }
      })();
    },
    onError: () => {}, // failed attempts are expected under faults; the election goes on
  });
  // start() makes the first attempt; with the database out of reach it fails, and we retry.
  for (;;) {
    try {
      await election.start();
      return;
    } catch {
      await sleep(200);
    }
  }
}
