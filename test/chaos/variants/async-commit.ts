/**
 * Broken variant (d), for the chaos harness only: every statement commits asynchronously. Each
 * of the engine's connections starts with `synchronous_commit = off`, and the statements the real
 * engine makes durable for their own transaction (those that hand out a token or a generation,
 * src/engine/postgres/durable-commit.ts) keep it off. A commit then answers before its WAL is
 * flushed, so a caller is told that a job was enqueued, a completion accepted or a term granted,
 * and a crash of the server before the WAL writer flushes (a few hundred milliseconds) undoes it.
 * Every value is still correct while the server stays up: only the pg-crash fault and the
 * "acknowledged, then lost" checker can tell it from the real engine.
 */
import type pg from 'pg';
import { DURABLE_COMMIT } from '../../../src/engine/postgres/durable-commit.js';
import {
  PostgresEngine,
  type PostgresEngineOptions,
} from '../../../src/engine/postgres/postgres-engine.js';

const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true)`;

/** The statement with the real engine's durable-commit expression turned into its opposite. */
function undurable(text: string): string {
  return text.split(DURABLE_COMMIT).join(ASYNC_COMMIT);
}

export class AsyncCommitEngine extends PostgresEngine {
  constructor(options: PostgresEngineOptions & { connectionString: string }) {
    const url = new URL(options.connectionString);
    // Deliberately not durable: a startup option, so dedicated lock connections get it too.
    url.searchParams.set('options', '-c synchronous_commit=off');
    super({ ...options, connectionString: url.toString() });
    // Every pooled client (pool.query goes through one too) sends the rewritten statements.
    this.pool.on('connect', (client: pg.PoolClient) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (
        first: unknown,
        ...rest: unknown[]
      ) => query(rewritten(first), ...rest);
    });
  }
}

function rewritten(first: unknown): unknown {
  if (typeof first === 'string') return undurable(first);
  const config = first as { text?: unknown; submit?: unknown } | null;
  // A query config (not a submittable Query object, which must keep its identity).
  if (config && typeof config.text === 'string' && typeof config.submit !== 'function')
    return { ...config, text: undurable(config.text) };
  return first;
}
