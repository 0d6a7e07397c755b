/** Every checker, run over one history. Each is a pure function in its own module. */
import type { History, Violation } from '../history.js';
import { checkAcknowledgedLost } from './acknowledged-lost.js';
import { checkExpiredRenewal } from './expired-renewal.js';
import { checkFencedCounter } from './fenced-counter.js';
import { checkHolderOverlap } from './holder-overlap.js';
import { checkJobOutcome } from './job-outcome.js';
import { checkLateAbort } from './late-abort.js';
import { checkLeaks } from './leaks.js';
import { checkSlotOnce } from './slot-once.js';
import { checkSlowTakeover } from './slow-takeover.js';
import { checkSupersededCompletion } from './superseded-completion.js';
import { checkTokenOrder } from './token-order.js';
import { checkEnqueueDuplicates } from './enqueue-duplicates.js';
import { checkPartitionOrder } from './partition-order.js';
import { checkLimitExceeded } from './limit-exceeded.js';
import { checkStepOnce } from './step-once.js';

export const CHECKERS: readonly ((history: History) => Violation[])[] = [
  checkTokenOrder,
  checkHolderOverlap,
  checkExpiredRenewal,
  checkFencedCounter,
  checkLateAbort,
  checkSlowTakeover,
  checkJobOutcome,
  checkSupersededCompletion,
  checkSlotOnce,
  checkLeaks,
  checkAcknowledgedLost,
  checkEnqueueDuplicates,
  checkPartitionOrder,
  checkLimitExceeded,
  checkStepOnce,
];

export function checkHistory(history: History): Violation[] {
  return CHECKERS.flatMap((check) => check(history));
}
