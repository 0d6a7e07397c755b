/**
 * Checker 11: nothing acknowledged to its caller is missing from the database after the run,
 * crashes and recoveries included (pg-crash). The database is audited once every client has
 * stopped; whatever a caller was told had happened must still be there:
 * - an enqueue the producer was answered: every job id it was given exists;
 * - a completion its worker saw commit: the job is completed, with the effect that completion's
 *   generation wrote in the same transaction (a completion lost and the job run again leaves a
 *   completed job with another generation's effect, which job-outcome alone cannot tell);
 * - a lease or lease-lock term granted or renewed with token T: the resource's stored token is at
 *   least T (rows are never deleted, so a lower one means the grant vanished and T can be issued
 *   again);
 * - a session-lock token T granted: the token sequence stands at T's own part or later (a token
 *   is its epoch's floor, epoch * 2^32, plus the sequence's value: decision 0225);
 * - a job claimed at generation G (a worker started it): the job's generation is at least G;
 * - a single enqueue of the producer role answered with a job id: that job exists.
 * Each violation carries `ackedAt`, the time the caller was answered: in an asynchronous failover
 * run a loss that fell before a failover is the replication mode's (failover-losses.ts).
 * An acknowledged increment that is absent is the counter checker's (`counter`), and a token
 * issued again after a lost one is token-order's; both stay where they are.
 */
import type {
  ChildEvent,
  EnqueueAckEvent,
  EnqueueEvent,
  History,
  JobEvent,
  LeaseOpEvent,
  SessionTermEvent,
  StoredTokenFact,
  Violation,
} from '../history.js';

/** Tokens per epoch: a token is epoch * 2^32 + n (decision 0225). */
const EPOCH_SPAN = 2 ** 32;

const tokenKey = (family: StoredTokenFact['family'], resource: string): string =>
  `${family}|${resource}`;

export function checkAcknowledgedLost(history: History): Violation[] {
  const violations: Violation[] = [];
  const lost = (message: string, evidence: unknown, ackedAt: number): void => {
    violations.push({ kind: 'acknowledged-lost', message, evidence, ackedAt });
  };
  const { facts } = history;
  const jobs = new Map(facts.jobs.map((j) => [j.id, j]));
  const effects = new Set(facts.effects.map((e) => `${e.jobId}|${e.generation}`));
  const stored = new Map(facts.storedTokens.map((t) => [tokenKey(t.family, t.resource), t.token]));
  const enqueued = facts.enqueued ? new Set(facts.enqueued.map((j) => j.id)) : undefined;

  for (const e of history.events) {
    if (e.type === 'enqueue-ack') {
      const ack = e as ChildEvent & EnqueueAckEvent;
      for (const id of ack.jobIds)
        if (!jobs.has(id))
          lost(`job ${id} was acknowledged as enqueued but does not exist`, ack, ack.t);
    } else if (e.type === 'job' && e.phase === 'complete-ok') {
      const done = e as ChildEvent & JobEvent;
      const job = jobs.get(done.jobId);
      if (job?.status !== 'completed' || !effects.has(`${done.jobId}|${done.generation}`))
        lost(
          `job ${done.jobId}: completion of generation ${done.generation} was acknowledged but the job is ${job ? `${job.status} without that generation's effect` : 'gone'}`,
          { completion: done, job: job ?? null },
          done.t,
        );
    } else if (e.type === 'job' && e.phase === 'started') {
      const claimed = e as ChildEvent & JobEvent;
      const job = jobs.get(claimed.jobId);
      if (job && job.generation < claimed.generation)
        lost(
          `job ${claimed.jobId}: claim of generation ${claimed.generation} was acknowledged but the job is at generation ${job.generation}`,
          claimed,
          claimed.t,
        );
    } else if (e.type === 'enqueue' && e.phase === 'ok' && e.jobId !== undefined && enqueued) {
      const answered = e as ChildEvent & EnqueueEvent;
      if (!enqueued.has(answered.jobId!))
        lost(
          `job ${answered.jobId} (call ${answered.opId}) was acknowledged as enqueued but does not exist`,
          answered,
          answered.t,
        );
    } else if (e.type === 'lease-op' && e.ok && e.op !== 'release' && e.token !== undefined) {
      const op = e as ChildEvent & LeaseOpEvent;
      const token = stored.get(tokenKey(op.family, op.resource));
      if (token === undefined || token < op.token!)
        lost(
          `${op.family}:${op.resource}: ${op.op} of token ${op.token} by ${op.holder} was acknowledged but the stored token is ${token ?? 'missing'}`,
          op,
          op.t,
        );
    } else if (e.type === 'session-term' && e.phase === 'granted') {
      const grant = e as ChildEvent & SessionTermEvent;
      const token = stored.get(tokenKey('session', '*'));
      const drawn = grant.token % EPOCH_SPAN;
      if (token === undefined || token < drawn)
        lost(
          `session:${grant.resource}: token ${grant.token} (sequence value ${drawn}) was granted to ${grant.holder} but the token sequence stands at ${token ?? 'missing'}`,
          grant,
          grant.t,
        );
    }
  }
  return violations;
}
