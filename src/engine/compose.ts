/**
 * Composition of an engine from its families: the one place where the seam's ~50 operations
 * become methods, so an engine writes no delegators of its own. An engine class extends
 * `ComposedEngine`, passes one implementation per family to `super`, and adds the basics
 * (name, capabilities, clock, migrate, now, close) that `implements Engine` then demands.
 *
 * Typed both ways: `EngineFamilies` makes a family implementation lacking an operation a compile
 * error, and families.ts makes an operation missing from the list a compile error, so every
 * operation of the interface is installed (decision 0233).
 */
import type { EngineFamilies, EngineFamilyName, EngineOperations } from './families.js';
import { ENGINE_FAMILIES, FAMILY_OPERATIONS } from './families.js';

export interface ComposeOptions {
  /**
   * Runs before every operation, and what it throws becomes that call's rejection (the memory
   * engine refuses calls once closed). Without one, each method is the family's own, bound.
   */
  readonly guard?: () => void;
}

type Operation = (params?: unknown) => Promise<unknown>;

/**
 * The operations as instance properties (a mapped type, so a subclass may still override one
 * with a property of its own, as the chaos variants do).
 */
export type EngineOperationProperties = { [K in keyof EngineOperations]: EngineOperations[K] };

/** The methods of an engine made of `families`: each calls its family's implementation. */
export function delegateOperations(
  families: EngineFamilies,
  options: ComposeOptions = {},
): EngineOperationProperties {
  const methods: Record<string, Operation> = {};
  const { guard } = options;
  for (const family of ENGINE_FAMILIES) {
    const implementation = families[family] as unknown as Record<string, Operation>;
    for (const name of FAMILY_OPERATIONS[family]) {
      const method = implementation[name];
      // Unreachable from typed code; a family given through a cast still fails loudly, at once.
      if (typeof method !== 'function') throw new TypeError(`the ${family} family lacks ${name}`);
      const bound = method.bind(implementation);
      methods[name] = guard
        ? async (params) => {
            guard();
            return bound(params);
          }
        : bound;
    }
  }
  return methods as unknown as EngineOperationProperties;
}

/** Base class of the engines: installs `delegateOperations(families, options)` on the instance. */
export const ComposedEngine = class ComposedEngine {
  constructor(families: EngineFamilies, options: ComposeOptions = {}) {
    Object.assign(this, delegateOperations(families, options));
  }
} as unknown as abstract new (
  families: EngineFamilies,
  options?: ComposeOptions,
) => EngineOperationProperties;

/**
 * A family whose every operation rejects with `error(operation)`: for an engine that lacks a
 * capability in some configuration (PostgreSQL behind a transaction pooler has no connection
 * locks). The engine declares the capability false, so callers can tell beforehand.
 */
export function refusingFamily<F extends EngineFamilyName>(
  family: F,
  error: (operation: (typeof FAMILY_OPERATIONS)[F][number]) => Error,
): EngineFamilies[F] {
  return Object.fromEntries(
    FAMILY_OPERATIONS[family].map((name) => [name, () => Promise.reject(error(name))]),
  ) as unknown as EngineFamilies[F];
}
