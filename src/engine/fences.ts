/**
 * The fence family of the engine seam: what the Fence helper (a downstream write guard) is
 * built on. A fence keeps the newest token seen per scope; an older token is refused.
 */
import type { FencingToken } from '../core/types.js';
import type { CallerTransaction } from './types.js';

export interface FenceCheckParams {
  scope: string;
  token: FencingToken;
  /** Check inside the caller's transaction, which then guards the caller's write. */
  tx?: CallerTransaction;
}

export interface FenceOperations {
  /**
   * Records `token` as the newest seen for `scope`, or throws StaleTokenError when a newer one
   * was seen. An equal token passes (the same holder writing again).
   */
  fenceCheck(params: FenceCheckParams): Promise<void>;
  /** The newest token seen for `scope`; null when none was. */
  fenceGet(params: { scope: string }): Promise<FencingToken | null>;
}
