/**
 * A lease holder: takes the lease with `lh.leases.hold`, does fenced increments while it trusts
 * its term, and releases it after a while so that terms turn over. Optionally it also competes
 * for a session lock and does fenced increments under that token.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { HeldLease } from '../../../../src/core/held-lease.js';
import { monotonicToWall } from '../../wall-clock.js';
import type { ChildConfig } from '../config.js';
import { codeOf, fencedIncrement, type IncrementTarget } from '../fenced-increment.js';

export function runHolder(
  config: ChildConfig,
  target: IncrementTarget,
  running: () => boolean,
): void {
  void leaseLoop(config, target, running);
  if (config.sessionLock) void sessionLoop(config.sessionLock, target, running);
  for (let i = 0; i < (config.churn?.loops ?? 0); i++)
    void churnLoop(config.churn!, `${config.proc}#${config.incarnation}:c${i}`, target, running);
}

/**
 * Short terms on a few shared resources, as fast as they come: acquire (plain, no renewal), one
 * fenced increment under the token, release. Volume for the checkers: every term is recorded by
 * the engine wrapper, every increment in the ledger, so an overlap or a lost update shows.
 */
async function churnLoop(
  churn: NonNullable<ChildConfig['churn']>,
  prefix: string,
  target: IncrementTarget,
  running: () => boolean,
): Promise<void> {
  const { lh } = target;
  let attempt = 0;
  while (running()) {
    const resource = churn.resources[Math.floor(Math.random() * churn.resources.length)]!;
    const holder = `${prefix}:${++attempt}`;
    try {
      const lease = await lh.leases.acquire(resource, { holder, ttl: churn.ttlMs });
      if (!lease) {
        await sleep(between(1, 10));
        continue;
      }
      await fencedIncrement(target, `lease:${resource}`, lease.token);
      await lh.leases.release(lease);
    } catch {
      await sleep(between(20, 100)); // the database or the network is failing: back off a bit
    }
  }
}

const between = (min: number, max: number): number => min + Math.random() * (max - min);

async function leaseLoop(
  config: ChildConfig,
  target: IncrementTarget,
  running: () => boolean,
): Promise<void> {
  const { lh, emit } = target;
  const { resource, ttlMs, renewEveryMs, marginMs } = config.lease;
  let attempt = 0;
  while (running()) {
    // A fresh holder name per attempt: a re-acquire of our own live term would keep its token.
    const holder = `${config.proc}#${config.incarnation}:${++attempt}`;
    let held: HeldLease | undefined;
    const trust = (): void => {
      if (held)
        emit({
          type: 'trust',
          resource,
          holder,
          token: held.token,
          trustedUntil: monotonicToWall(held.trustedUntil),
          marginMs,
        });
    };
    try {
      held = await lh.leases.hold(resource, {
        holder,
        ttl: ttlMs,
        renewEvery: renewEveryMs,
        margin: marginMs,
        onRenewed: () => trust(),
      });
    } catch {
      await sleep(between(50, 250));
      continue;
    }
    const term = held;
    trust();
    term.signal.addEventListener('abort', () =>
      emit({
        type: 'signal',
        resource,
        holder,
        token: term.token,
        reason: codeOf(term.signal.reason),
      }),
    );
    const until = Date.now() + between(500, 2_000);
    while (running() && Date.now() < until && term.isTrusted()) {
      await fencedIncrement(target, `lease:${resource}`, term.token);
      await sleep(between(30, 120));
    }
    await term.release().catch(() => {});
    await sleep(between(0, 200));
  }
}

async function sessionLoop(
  name: string,
  target: IncrementTarget,
  running: () => boolean,
): Promise<void> {
  const { lh, emit } = target;
  let attempt = 0;
  while (running()) {
    const holder = `${target.proc}#${target.incarnation}:s${++attempt}`;
    const lock = lh.locks.session(name);
    let token: number;
    try {
      token = await lock.lock({ timeout: 3_000 });
    } catch {
      await sleep(between(50, 250));
      continue;
    }
    emit({ type: 'session-term', resource: name, holder, token, phase: 'granted' });
    const until = Date.now() + between(200, 800);
    while (running() && Date.now() < until && lock.isHeld()) {
      await fencedIncrement(target, `session:${name}`, token);
      await sleep(between(20, 80));
    }
    await lock.unlock().catch(() => false);
    emit({ type: 'session-term', resource: name, holder, token, phase: 'ended' });
    await sleep(between(0, 150));
  }
}
