/**
 * The fence: a downstream write guard. A holder passes its fencing token to
 * `lh.fence(scope).check(tx, token)` inside the same transaction as the write it protects. The
 * check records the token as the newest seen for the scope, or throws a StaleTokenError (code
 * `stale_token`) when a newer one was seen, so a holder that was superseded (paused past its
 * expiry, cut off from the database, or simply slow) cannot overwrite its successor's work.
 *
 * Because the check runs in the caller's transaction it commits or rolls back with the write:
 * a rolled-back check records nothing, and a committed write was, at commit, made under the
 * newest token. An equal token passes (the same holder writing again). On PostgreSQL the check
 * also locks the scope's row until the transaction ends, so an older writer that arrives while
 * a newer one's transaction is open waits for it and is then refused.
 *
 * Without a transaction the check is its own statement: it still refuses stale tokens, but it
 * cannot make another write conditional on itself. The memory engine has no transactions to
 * join, so there `tx` is omitted.
 */
import { InvalidArgumentError, UnsupportedError } from '../core/errors.js';
import type { FencingToken } from '../core/types.js';
import { requireName, requireSafeInteger } from '../core/validate.js';
import type { CallerTransaction, Engine } from '../engine/engine.js';

export class Fence {
  readonly scope: string;

  constructor(
    private readonly engine: Engine,
    scope: string,
  ) {
    this.scope = requireName('scope', scope);
  }

  /** Records `token` for the scope as its own statement (no caller transaction). */
  check(token: FencingToken): Promise<void>;
  /** Records `token` inside `tx`, which then commits or rolls back with the caller's write. */
  check(tx: CallerTransaction | null | undefined, token: FencingToken): Promise<void>;
  async check(
    txOrToken: CallerTransaction | FencingToken | null | undefined,
    maybeToken?: FencingToken,
  ): Promise<void> {
    const positional = typeof txOrToken === 'number' && maybeToken === undefined;
    const tx = positional ? undefined : (txOrToken as CallerTransaction | null | undefined);
    const token = requireSafeInteger('token', positional ? txOrToken : maybeToken, 1);
    if (tx !== undefined && tx !== null) {
      if (typeof (tx as Partial<CallerTransaction>).query !== 'function')
        throw new InvalidArgumentError(
          'tx',
          'must be a client inside a transaction (with query())',
        );
      if (!this.engine.capabilities.callerTransactions)
        throw new UnsupportedError(
          `the ${this.engine.name} engine cannot join a caller transaction: omit tx`,
        );
      return this.engine.fenceCheck({ scope: this.scope, token, tx });
    }
    return this.engine.fenceCheck({ scope: this.scope, token });
  }

  /** The newest token recorded for the scope (committed ones only); null when none was. */
  get(): Promise<FencingToken | null> {
    return this.engine.fenceGet({ scope: this.scope });
  }
}
