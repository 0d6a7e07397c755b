/**
 * `lh.controls`: small named settings every instance must agree on (whether the task generator
 * runs, say), kept in the database so a change made through any instance is seen by all.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { requireJsonObject, requireName } from '../core/validate.js';
import type { Engine } from '../engine/engine.js';

/** A control as stored: its value, and who set it when. */
export type Control = NonNullable<Awaited<ReturnType<Engine['controlGet']>>>;

export class ControlManager {
  constructor(private readonly engine: Engine) {}

  /** The control, or null when it was never set. */
  async get(name: string): Promise<Control | null> {
    return this.engine.controlGet({ name: requireName('name', name) });
  }

  /** Replaces the control's value (creating it on first use); `updatedBy` names who changed it. */
  async set(
    name: string,
    value: Record<string, unknown>,
    options: { updatedBy: string },
  ): Promise<Control> {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'must be an object { updatedBy }');
    return this.engine.controlSet({
      name: requireName('name', name),
      value: requireJsonObject('value', value),
      updatedBy: requireName('updatedBy', options.updatedBy),
    });
  }
}
