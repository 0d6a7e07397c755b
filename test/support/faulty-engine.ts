/**
 * Engine wrappers that inject faults, for tests: the collaborator a test injects instead of a
 * test-only option in production code. Only the named operations are affected.
 */
import type { Engine } from '../../src/engine/engine.js';
import { UnavailableError } from '../../src/core/errors.js';

export type FaultMode = 'pass' | 'hang' | 'fail';

export interface FaultyEngine {
  engine: Engine;
  /** Sets the behaviour of one operation from now on. */
  set(operation: keyof Engine, mode: FaultMode): void;
  /** Calls of an operation so far. */
  calls(operation: keyof Engine): number;
  /** Calls of an operation that have not settled yet. */
  pending(operation: keyof Engine): number;
}

export function faultyEngine(inner: Engine): FaultyEngine {
  const modes = new Map<PropertyKey, FaultMode>();
  const counts = new Map<PropertyKey, number>();
  const unsettled = new Map<PropertyKey, number>();
  const engine = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        counts.set(property, (counts.get(property) ?? 0) + 1);
        const mode = modes.get(property) ?? 'pass';
        if (mode === 'hang') return new Promise(() => {});
        if (mode === 'fail')
          return Promise.reject(new UnavailableError(`injected failure in ${String(property)}`));
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(result instanceof Promise)) return result;
        unsettled.set(property, (unsettled.get(property) ?? 0) + 1);
        const settle = (): void => void unsettled.set(property, unsettled.get(property)! - 1);
        result.then(settle, settle);
        return result;
      };
    },
  });
  return {
    engine,
    set: (operation, mode) => modes.set(operation, mode),
    calls: (operation) => counts.get(operation) ?? 0,
    pending: (operation) => unsettled.get(operation) ?? 0,
  };
}
