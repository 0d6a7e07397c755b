/**
 * How one jobEnqueue call treats several specs with the same (queue, key) (decision 0252): they
 * act as one enqueue, so each engine writes each job once and both engines answer alike. Within
 * a group, the first spec (the leader) names the partition of a job the call creates; the last
 * spec that replaces (`onConflict: 'replace'`) gives the fields, as the calls one after another
 * would have left them; the group debounces if any of its specs does.
 */
import type { EnqueueOutcome, JobSpec } from './jobs.js';

/** The specs of one (queue, key) in input order, or one spec without a key. */
export interface EnqueueGroup {
  /** Index (in the call's input) of the group's first spec. */
  readonly leader: number;
  /** Indexes of all its specs, the leader first. */
  readonly members: readonly number[];
  /** What the engine writes for the whole group. */
  readonly spec: JobSpec;
}

export function replaces(spec: JobSpec): boolean {
  return spec.onConflict === 'replace';
}

/** The call's specs grouped by (queue, key), groups in the order of their leaders. */
export function groupByKey(specs: readonly JobSpec[]): EnqueueGroup[] {
  const members = new Map<string, number[]>();
  const groups: number[][] = [];
  specs.forEach((spec, i) => {
    if (spec.key == null) {
      groups.push([i]);
      return;
    }
    const k = JSON.stringify([spec.queue, spec.key]);
    const group = members.get(k);
    if (group) group.push(i);
    else {
      const fresh = [i];
      members.set(k, fresh);
      groups.push(fresh);
    }
  });
  return groups.map((indexes) => ({
    leader: indexes[0]!,
    members: indexes,
    spec: groupSpec(indexes.map((i) => specs[i]!)),
  }));
}

function groupSpec(specs: readonly JobSpec[]): JobSpec {
  const leader = specs[0]!;
  if (specs.length === 1) return leader;
  const last = specs.filter(replaces).at(-1);
  if (!last) return leader;
  const debounce = specs.some((s) => s.debounce === true);
  const { partitionKey: _ignored, ...fields } = last;
  return {
    ...fields,
    ...(leader.partitionKey == null ? {} : { partitionKey: leader.partitionKey }),
    onConflict: 'replace',
    ...(debounce ? { debounce } : {}),
  };
}

/**
 * Each member's answer from the outcome of the group's spec, written into `out` at its index:
 * the job as the call left it; `created` for the leader only; `replaced` for a spec that
 * replaces when the group overwrote a pending job, or (a later spec) the job just created.
 */
export function answerGroup(
  group: EnqueueGroup,
  specs: readonly JobSpec[],
  outcome: EnqueueOutcome,
  out: EnqueueOutcome[],
): void {
  for (const i of group.members) {
    const spec = specs[i]!;
    out[i] =
      i === group.leader
        ? {
            job: outcome.job,
            created: outcome.created,
            replaced: outcome.replaced && replaces(spec),
          }
        : {
            job: outcome.job,
            created: false,
            replaced: replaces(spec) && (outcome.created || outcome.replaced),
          };
  }
}
