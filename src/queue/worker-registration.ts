/**
 * Checks what a worker outside this toolkit says about itself when it registers (an HTTP task
 * worker, decision 0264), so the workers table holds only rows an operator can read: names and
 * queues within the usual limits, a pid and a concurrency that are whole numbers.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { WORKER_KINDS, WORKER_STATUSES, type WorkerStatus } from '../core/types.js';
import { requireName, requireOneOf, requireSafeInteger } from '../core/validate.js';
import type { WorkerRegisterParams } from '../engine/workers.js';

/** At most this many queues named by one worker: a row, not a catalogue. */
const MAX_QUEUES = 100;

export function requireWorkerRegistration(value: unknown): WorkerRegisterParams {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError('worker', 'must be an object');
  const w = value as Record<string, unknown>;
  if (!Array.isArray(w.queues) || w.queues.length === 0 || w.queues.length > MAX_QUEUES)
    throw new InvalidArgumentError('queues', `must be an array of 1 to ${MAX_QUEUES} queue names`);
  return {
    id: requireName('id', w.id),
    name: requireName('name', w.name),
    host: requireName('host', w.host),
    pid: requireSafeInteger('pid', w.pid, 0),
    queues: w.queues.map((q, i) => requireName(`queues[${i}]`, q)),
    concurrency: requireSafeInteger('concurrency', w.concurrency, 1),
    kind: w.kind === undefined ? 'library' : requireOneOf('kind', w.kind, WORKER_KINDS),
  };
}

/** A heartbeat's status: a worker may say it drains or stopped; `dead` is maintenance's word. */
export function requireReportedStatus(value: unknown): WorkerStatus {
  const status = requireOneOf('status', value, WORKER_STATUSES);
  if (status === 'dead')
    throw new InvalidArgumentError('status', 'a worker cannot report itself dead');
  return status;
}
