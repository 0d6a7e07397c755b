/**
 * A child's history goes to the harness as one JSON line per event on stdout, stamped with the
 * shared wall clock (see wall-clock.ts) and with who emitted it.
 */
import type { ChildEventBody } from '../history.js';
import { wallNow } from '../wall-clock.js';

export type Emit = (event: ChildEventBody) => void;

export function emitterFor(proc: string, incarnation: number): Emit {
  return (event) =>
    void process.stdout.write(
      `${JSON.stringify({ ...event, proc, incarnation, pid: process.pid, t: wallNow() })}\n`,
    );
}
