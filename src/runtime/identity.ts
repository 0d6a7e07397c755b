import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

/**
 * A holder id that names this process for humans (host and pid) and stays unique when a pid is
 * reused after a restart (random suffix). Holder ids only need to be unique among live holders.
 */
export function defaultHolderId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}
