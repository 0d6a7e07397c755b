/**
 * `mapLimited(items, limit, fn)`: `fn` over every item with at most `limit` calls running, the
 * answers in item order. On the first failure no further item is started, the calls already
 * running are waited for (nothing is left writing behind the caller's back), and that first
 * failure is thrown.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const answers = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const runner = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        answers[index] = await fn(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  const runners = Math.max(1, Math.min(limit, items.length));
  await Promise.all(Array.from({ length: runners }, runner));
  if (failure !== undefined) throw failure.error;
  return answers;
}
