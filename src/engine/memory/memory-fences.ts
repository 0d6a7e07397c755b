/** The fence family in process: the newest token per scope; no caller transactions. */
import { StaleTokenError, UnsupportedError } from '../../core/errors.js';
import type { FencingToken } from '../../core/types.js';
import type { FenceCheckParams, FenceOperations } from '../fences.js';

export class MemoryFences implements FenceOperations {
  private readonly fences = new Map<string, FencingToken>();

  async fenceCheck(p: FenceCheckParams): Promise<void> {
    if (p.tx) throw new UnsupportedError('the memory engine cannot join a caller transaction');
    const newest = this.fences.get(p.scope);
    if (newest !== undefined && newest > p.token)
      throw new StaleTokenError(p.scope, p.token, newest);
    this.fences.set(p.scope, p.token);
  }

  async fenceGet(p: { scope: string }): Promise<FencingToken | null> {
    return this.fences.get(p.scope) ?? null;
  }
}
