/** A schedule runner in mode lock: each slot's run writes a row (no unique key, on purpose). */
import type { ChildConfig } from '../config.js';
import type { IncrementTarget } from '../fenced-increment.js';

export function runScheduler(config: ChildConfig, target: IncrementTarget): void {
  const { lh, pool, schema, emit } = target;
  const { name, everyMs } = config.schedule;
  lh.schedule(
    name,
    {
      every: everyMs,
      mode: 'lock',
      instanceId: `${config.proc}#${config.incarnation}`,
      onError: () => {}, // unreachable database during faults: the schedule goes on
    },
    async ({ slot, token }) => {
      await pool.query(
        `INSERT INTO "${schema}".chaos_schedule_runs (name, slot, proc) VALUES ($1, $2, $3)`,
        [name, slot, `${config.proc}#${config.incarnation}`],
      );
      emit({ type: 'slot', name, slot: slot.getTime(), token: token ?? null });
    },
  );
}
