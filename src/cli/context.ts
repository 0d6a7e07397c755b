import type { Writable } from 'node:stream';

/** Where commands write: injected so tests can capture output. */
export interface CliContext {
  readonly out: Writable;
  readonly err: Writable;
}
