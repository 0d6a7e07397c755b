/**
 * The task domain of the seed's API, shared by the HTTP service (service/) and the processes
 * that produce and consume tasks (processes/): neither imports the other for it. A task is a
 * job of the `tasks` queue; the generator that produces demo tasks runs while its control says
 * so, on whichever instance holds its lease.
 */
import type { LeaseholdFacade } from '../leasehold.js';

/** The queue whose jobs are the API's tasks. */
export const TASKS_QUEUE = 'tasks';

/** The control that says whether the generator should run (every instance reads the same row). */
export const GENERATOR_CONTROL = 'generator';
/** The lease the generating instance holds: one instance generates at a time. */
export const GENERATOR_RESOURCE = 'leasehold:generator';

export interface GeneratorStatus {
  /** What the fleet was told: every instance reads the same row. */
  readonly state: 'started' | 'stopped';
  /** The instance generating now (holder of the generator lease), if any. */
  readonly runningOn: string | null;
  readonly token: number | null;
  readonly leaseExpiresAt: string | null;
  readonly changedBy: string | null;
  readonly changedAt: string | null;
}

export async function generatorStatus(lh: LeaseholdFacade): Promise<GeneratorStatus> {
  const [control, lease] = await Promise.all([
    lh.controls.get(GENERATOR_CONTROL),
    lh.leases.get(GENERATOR_RESOURCE),
  ]);
  const live = lease?.state === 'active' ? lease : null;
  return {
    state: control?.value.running === true ? 'started' : 'stopped',
    runningOn: live?.holder ?? null,
    token: live?.token ?? null,
    leaseExpiresAt: live?.expiresAt.toISOString() ?? null,
    changedBy: control?.updatedBy ?? null,
    changedAt: control?.updatedAt.toISOString() ?? null,
  };
}

/** Tells every instance to start or stop generating; answers the status that follows. */
export async function setGeneratorRunning(
  lh: LeaseholdFacade,
  running: boolean,
  changedBy: string,
): Promise<GeneratorStatus> {
  await lh.controls.set(GENERATOR_CONTROL, { running }, { updatedBy: changedBy });
  return generatorStatus(lh);
}
