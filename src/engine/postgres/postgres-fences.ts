/**
 * The fence family on PostgreSQL: one pooled statement each from lock-queries, run on the
 * caller's transaction when given one (the check then guards the caller's write).
 */
import { StaleTokenError } from '../../core/errors.js';
import type { FencingToken } from '../../core/types.js';
import type { FenceCheckParams, FenceOperations } from '../fences.js';
import type { PgContext } from './context.js';
import type { LockQueries } from './lock-queries.js';
import { toSafeInteger } from './rows.js';

export class PostgresFences implements FenceOperations {
  constructor(
    private readonly ctx: PgContext,
    private readonly sql: LockQueries,
  ) {}

  async fenceCheck(p: FenceCheckParams): Promise<void> {
    const rows = await this.ctx.query<{ token: string }>(
      'FenceCheck',
      this.sql.FenceCheck,
      [p.scope, p.token, this.ctx.pinnedNow()],
      p.tx,
    );
    if (rows[0]) return;
    const [newest] = await this.ctx.query<{ token: string }>(
      'FenceGet',
      this.sql.FenceGet,
      [p.scope],
      p.tx,
    );
    throw new StaleTokenError(p.scope, p.token, toSafeInteger(newest?.token ?? 0, 'fences.token'));
  }

  async fenceGet(p: { scope: string }): Promise<FencingToken | null> {
    const rows = await this.ctx.query<{ token: string }>('FenceGet', this.sql.FenceGet, [p.scope]);
    return rows[0] ? toSafeInteger(rows[0].token, 'fences.token') : null;
  }
}
