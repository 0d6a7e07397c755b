/** How the memory engine orders names, as PostgreSQL orders them in leasehold's tables. */

/** Code point order, as PostgreSQL's `COLLATE "C"` on UTF-8 (and unlike UTF-16 code units). */
export function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
