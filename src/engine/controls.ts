/**
 * The controls family: small named settings that every instance must agree on, such as
 * whether the task generator should run. Kept in the database, so a stop sent to any instance
 * is seen by all of them (the inconsistency of an in-memory flag per instance is the bug this
 * fixes).
 */
export interface Control {
  readonly name: string;
  readonly value: Readonly<Record<string, unknown>>;
  readonly updatedAt: Date;
  readonly updatedBy: string;
}

export interface ControlOperations {
  controlGet(params: { name: string }): Promise<Control | null>;
  /** Replaces the value (creating the control on first use) and returns it. */
  controlSet(params: {
    name: string;
    value: Record<string, unknown>;
    updatedBy: string;
  }): Promise<Control>;
}
