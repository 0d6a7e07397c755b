/**
 * The PostgreSQL of a chaos run. By default the harness starts its own server
 * (test/support/crashable-postgres.ts) with default durability (fsync, synchronous_commit and
 * full_page_writes on, which that helper enforces), so it can stop and start it (pg-restart) or
 * crash it (pg-crash) on the same data and port: a crash must lose nothing that was
 * acknowledged. Given a DATABASE_URL instead, it uses that server and can do neither: those
 * faults are then skipped, and the summary says so.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { startCrashablePostgres, type CrashHow } from '../../support/crashable-postgres.js';

/** The settings whose values `readDurability` reports. */
const DURABILITY = ['fsync', 'synchronous_commit', 'full_page_writes'] as const;

export interface ChaosDatabase {
  /** A direct connection string (the harness's own; children go through the proxy). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Why the pg-restart and pg-crash faults cannot run, or null when they can. */
  readonly cannotRestart: string | null;
  /** Stops the server and starts it again on the same data and port. */
  restart(): Promise<void>;
  /**
   * Crashes the server, in turn by SIGKILL of the postmaster and every process it started and by
   * an immediate stop (SIGQUIT): no shutdown checkpoint, nothing flushed that was not already.
   * Then starts it on the same data and port, which runs crash recovery. Answers what happened,
   * for the fault's record.
   */
  crash(): Promise<string>;
  close(): Promise<void>;
}

export async function openChaosDatabase(externalUrl?: string): Promise<ChaosDatabase> {
  if (externalUrl) {
    const parsed = new URL(externalUrl);
    return {
      url: externalUrl,
      host: parsed.hostname,
      port: Number(parsed.port || 5432),
      cannotRestart: 'the database was given by DATABASE_URL, which the harness cannot restart',
      restart: () => Promise.reject(new Error('cannot restart an external database')),
      crash: () => Promise.reject(new Error('cannot crash an external database')),
      close: async () => {},
    };
  }
  let recoveryLog: string[] = [];
  const server = await startCrashablePostgres({
    // Every child's pool, lock connections and listener, through the proxy.
    settings: { max_connections: 300 },
    onLog: (chunk) => void recoveryLog.push(chunk),
  });
  let crashes = 0;
  return {
    url: server.connectionString,
    host: '127.0.0.1',
    port: server.port,
    cannotRestart: null,
    async restart() {
      await server.shutdown();
      await startAgain(server.restart, () => recoveryLog);
    },
    async crash() {
      // Both kinds of crash, in turn: a power cut of the processes, then an immediate stop.
      const how: CrashHow = crashes++ % 2 === 0 ? 'sigkill' : 'immediate';
      await server.crash({ how });
      recoveryLog = [];
      await startAgain(server.restart, () => recoveryLog);
      const recovered = recoveryLog.some((chunk) =>
        /automatic recovery in progress|redo (starts|done)/.test(chunk),
      );
      return `${how === 'sigkill' ? 'SIGKILL of the postmaster and its children' : 'immediate stop (SIGQUIT)'}; ${recovered ? 'crash recovery ran' : 'no crash recovery logged'}`;
    },
    close: () => server.stop(),
  };
}

/**
 * Starts the server again. A killed backend can hold the old shared memory for a moment after
 * its exit is visible, so a refused start is retried a few times.
 */
async function startAgain(
  restart: () => Promise<void>,
  log: () => readonly string[],
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await restart();
    } catch (error) {
      if (attempt >= 10)
        throw new Error(`the chaos database did not start again: ${log().slice(-5).join(' | ')}`, {
          cause: error,
        });
      await sleep(500);
    }
  }
}

/** The server's durability settings as it reports them (`SHOW`), e.g. "fsync on, …". */
export async function readDurability(pool: pg.Pool): Promise<string> {
  const shown: string[] = [];
  for (const name of DURABILITY) {
    const { rows } = await pool.query<Record<string, string>>(`SHOW ${name}`);
    shown.push(`${name} ${rows[0]![name]}`);
  }
  return shown.join(', ');
}
