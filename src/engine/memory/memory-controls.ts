import type { Control, ControlOperations } from '../controls.js';

/** Controls in process: a Map of copies. */
export class MemoryControls implements ControlOperations {
  private readonly controls = new Map<string, Control>();

  constructor(private readonly now: () => Date) {}

  async controlGet(p: { name: string }): Promise<Control | null> {
    const control = this.controls.get(p.name);
    return control ? structuredClone(control) : null;
  }

  async controlSet(p: {
    name: string;
    value: Record<string, unknown>;
    updatedBy: string;
  }): Promise<Control> {
    const control: Control = {
      name: p.name,
      value: structuredClone(p.value),
      updatedAt: this.now(),
      updatedBy: p.updatedBy,
    };
    this.controls.set(p.name, control);
    return structuredClone(control);
  }
}
