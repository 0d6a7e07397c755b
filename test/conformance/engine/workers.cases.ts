import type { EngineHarness } from '../harness.js';

// Placeholder: cases are added by the work that builds this family.
export function workerEngineCases(_h: EngineHarness): void {}
