/**
 * Broken variant (d), for the chaos harness only: every statement commits asynchronously
 * (`synchronous_commit = off` on each of the engine's connections). A commit then answers before
 * its WAL is flushed, so a caller is told that a job was enqueued, a completion accepted or a
 * term granted, and a crash of the server in the next few hundred milliseconds (until the WAL
 * writer flushes) undoes it. Every value is still correct while the server stays up: only the
 * pg-crash fault and the "acknowledged, then lost" checker can tell it from the real engine.
 */
import {
  PostgresEngine,
  type PostgresEngineOptions,
} from '../../../src/engine/postgres/postgres-engine.js';

export class AsyncCommitEngine extends PostgresEngine {
  constructor(options: PostgresEngineOptions & { connectionString: string }) {
    const url = new URL(options.connectionString);
    // Deliberately not durable: a startup option, so dedicated lock connections get it too.
    url.searchParams.set('options', '-c synchronous_commit=off');
    super({ ...options, connectionString: url.toString() });
  }
}
