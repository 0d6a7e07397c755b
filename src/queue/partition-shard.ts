/**
 * Per-partition FIFO serialises a key: one job in flight at a time. For a hot key whose jobs
 * only need ordering *per entity* (per order id within one customer, say), shard it: the same
 * entity always lands on the same sub-key, so its jobs stay in order, while N sub-keys run in
 * parallel (seed 001).
 */
import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../core/errors.js';
import { requireName, requireSafeInteger } from '../core/validate.js';

/** `shardedPartitionKey('customer-42', orderId, 8)` → `customer-42#3`. */
export function shardedPartitionKey(key: string, entity: string, shards: number): string {
  requireName('key', key);
  requireName('entity', entity);
  requireSafeInteger('shards', shards, 1);
  if (shards > 1024) throw new InvalidArgumentError('shards', 'must be at most 1024');
  // A stable hash: every process, on every version of Node, maps an entity to the same shard.
  const digest = createHash('sha1').update(entity).digest();
  return `${key}#${digest.readUInt32BE(0) % shards}`;
}
