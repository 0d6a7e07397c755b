/**
 * Splits a many-lease call into rounds that one statement each can run. A statement cannot
 * touch the same lease row twice (ON CONFLICT refuses to; an UPDATE joined twice would apply
 * only one of the two), so the second occurrence of a resource waits for the next round, and
 * rounds run one after another: the answers are those of the single calls run in input order.
 * Each round is sorted by resource, so concurrent statements lock their rows in one order and
 * cannot deadlock one another.
 */
export async function inRounds<P extends { resource: string }, R>(
  params: readonly P[],
  run: (round: P[]) => Promise<R[]>,
): Promise<R[]> {
  const results = new Array<R>(params.length);
  for (const round of rounds(params)) {
    const answers = await run(round.map((i) => params[i]!));
    round.forEach((i, k) => (results[i] = answers[k]!));
  }
  return results;
}

/** Indexes into `params`, grouped into rounds of distinct resources, each sorted by resource. */
export function rounds(params: readonly { resource: string }[]): number[][] {
  const seen = new Map<string, number>();
  const grouped: number[][] = [];
  params.forEach((p, i) => {
    const round = seen.get(p.resource) ?? 0;
    seen.set(p.resource, round + 1);
    (grouped[round] ??= []).push(i);
  });
  for (const round of grouped)
    round.sort((a, b) => compare(params[a]!.resource, params[b]!.resource));
  return grouped;
}

// Byte order, as the database's "C" comparisons would have it; any total order serves, so long
// as every batch uses the same one.
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
