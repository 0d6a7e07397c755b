// `leasehold/client`: HTTP clients of the lease, task and queue service. Never imports pg.
export {
  LeaseClient,
  type LeaseClientOptions,
  type ClientAcquireOptions,
  type ClientHoldOptions,
} from './lease-client.js';
export {
  TaskClient,
  type Task,
  type CreateTaskOptions,
  type CreatedTask,
  type ClaimRef,
  type RenewTaskOptions,
  type TaskRenewal,
} from './task-client.js';
export {
  QueueClient,
  LONG_POLL_MS,
  type QueueClientOptions,
  type QueueInfo,
  type QueueSettingsInput,
  type ClientWaitOptions,
  type JobWaitAnswer,
  type FlowJson,
  type FlowChildJson,
  type FlowJobOptionsJson,
  type FlowJobJson,
} from './queue-client.js';
export type { ParentPolicy } from '../core/flows.js';
export type { HttpClientOptions } from './http.js';
export { HeldLease, type HeldLeaseState } from '../core/held-lease.js';
export * from '../core/errors.js';
export type {
  Lease,
  FencingToken,
  JobExplanation,
  JobStatus,
  QueueSettings,
} from '../core/types.js';
