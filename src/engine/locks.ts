/**
 * The four lock-shaped families of the engine seam, named together for the callers that want
 * them all: connection locks (connection-locks.ts), lease locks (lease-locks.ts), schedule slots
 * (schedule-slots.ts) and fences (fences.ts). They were one family in one file until decision
 * 0233 split them by concern; this module keeps the old import path working and defines
 * nothing of its own but the sum.
 */
import type { ConnectionLockOperations } from './connection-locks.js';
import type { FenceOperations } from './fences.js';
import type { LeaseLockOperations } from './lease-locks.js';
import type { ScheduleSlotOperations } from './schedule-slots.js';

export * from './connection-locks.js';
export * from './fences.js';
export * from './lease-locks.js';
export * from './schedule-slots.js';

/** Connection locks, lease locks, schedule slots and fences: the four families together. */
export interface LockOperations
  extends ConnectionLockOperations, LeaseLockOperations, ScheduleSlotOperations, FenceOperations {}
