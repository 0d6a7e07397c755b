import { Leasehold, type LeaseholdFacade } from '../leasehold.js';
import { resolveDatabase } from './database.js';

export interface DatabaseOptions {
  databaseUrl?: string;
  schema: string;
}

/** Runs `fn` with a migrated Leasehold on the command's database, and always cleans up. */
export async function withLeasehold<T>(
  opts: DatabaseOptions,
  fn: (lh: LeaseholdFacade) => Promise<T>,
): Promise<T> {
  const database = await resolveDatabase(opts.databaseUrl);
  const lh = await Leasehold.connect({
    connectionString: database.connectionString,
    schema: opts.schema,
    poolSize: 2,
    connectTimeoutMs: 5_000,
  });
  try {
    await lh.migrate();
    return await fn(lh);
  } finally {
    await lh.close();
    await database.stop();
  }
}

export const DATABASE_URL_HELP =
  'PostgreSQL URL (default: DATABASE_URL, else the embedded server under .leasehold/)';
