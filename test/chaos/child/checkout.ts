/**
 * A pooled client for a transaction of our own. While checked out, a client has no error listener
 * of the pool's: a server that goes away (a restart, pg_terminate_backend) would emit an
 * unhandled 'error' and crash the process. The query in flight fails anyway, which is how we
 * learn of it, so the event itself is only swallowed.
 */
import type pg from 'pg';

const ignore = (): void => {};

export async function checkout(
  pool: pg.Pool,
): Promise<{ client: pg.PoolClient; release(broken: boolean): void }> {
  const client = await pool.connect();
  client.on('error', ignore);
  return {
    client,
    release(broken) {
      client.off('error', ignore);
      client.release(broken);
    },
  };
}
