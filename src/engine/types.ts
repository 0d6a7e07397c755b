/**
 * Types shared by several families of the engine seam. A leaf of the engine folder: it imports
 * nothing, so every family file can use it without importing engine.ts (which imports them all).
 */

/**
 * A caller's own database transaction: anything with pg's `query(text, values)`, such as a
 * `PoolClient` inside BEGIN. Operations given one run on it, so they commit or roll back with
 * the caller's business writes. Only engines with the `callerTransactions` capability accept it.
 */
export interface CallerTransaction {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount?: number | null }>;
}
