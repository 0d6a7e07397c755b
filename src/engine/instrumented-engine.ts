/**
 * The instrumented engine: one wrapper that times and counts every engine call and tells its
 * listeners (as Oban instruments its engine), so metrics and tracing come from one place and
 * no caller times an engine call by hand. Leasehold builds every manager on one of these.
 *
 * It costs nothing while nobody listens. The wrapper is an object whose prototype is the engine
 * it wraps: it *is* that engine to every reader (`instanceof PostgresEngine`, `.pool`, `.name`),
 * and while there is no listener it has no operation of its own, so a call is the engine's own
 * method found one prototype step further (composed engines' operations are bound functions,
 * so the receiver does not matter). The first listener installs one timing function per
 * operation on the wrapper; the last one leaving puts forwarding functions in their place. An
 * operation the wrapped engine defines on its prototype (a class that does not compose its
 * families) is always called through a forwarding function, so its `this` stays the engine.
 *
 * What is timed is the engine call as its caller sees it: from the call until its promise
 * settles, a wait for a lock included.
 */
import { isLeaseholdError, type ErrorCode } from '../core/errors.js';
import type { Engine } from './engine.js';
import { ENGINE_OPERATIONS, type EngineOperationName, type EngineOperations } from './families.js';

/** Every call an engine answers: the family operations and the basics. */
export type EngineCallName = EngineOperationName | 'migrate' | 'now' | 'close';

export const ENGINE_CALLS: readonly EngineCallName[] = [
  ...ENGINE_OPERATIONS,
  'migrate',
  'now',
  'close',
];

/** What an engine call was given: its params object (undefined for the basics). */
export type EngineCallParams<K extends EngineCallName> = K extends EngineOperationName
  ? Parameters<EngineOperations[K]>[0]
  : undefined;

/** What an engine call answered. */
export type EngineCallResult<K extends EngineCallName> = K extends EngineOperationName
  ? Awaited<ReturnType<EngineOperations[K]>>
  : unknown;

/** One settled call of operation `K`. */
export interface EngineCallEventOf<K extends EngineCallName> {
  readonly operation: K;
  /**
   * The params the call was given, as given (the same object: read it, do not keep or change
   * it), for labels and trace attributes such as a claim's queues.
   */
  readonly params: EngineCallParams<K>;
  /**
   * What the call answered when ok (the same object: read it, do not keep or change it), for
   * counts such as a lease acquire's result or a claim's batch size; undefined on error.
   */
  readonly result: EngineCallResult<K> | undefined;
  /** The engine's name (`postgres`, `memory`, …). */
  readonly engine: string;
  /** From the call until its promise settled, in milliseconds (performance.now()). */
  readonly durationMs: number;
  readonly outcome: 'ok' | 'error';
  /** The error's stable code; `internal` for an error that is not a LeaseholdError; null when ok. */
  readonly errorCode: ErrorCode | null;
}

/** One settled engine call; narrow on `operation` to type `params`. */
export type EngineCallEvent = { [K in EngineCallName]: EngineCallEventOf<K> }[EngineCallName];

export type EngineCallListener = (event: EngineCallEvent) => void;

export interface InstrumentedEngine extends Engine {
  /** The engine this one wraps. */
  readonly instrumented: Engine;
  /**
   * Calls `listener` after every engine call settles, from now on; returns the function that
   * stops it. A listener that throws is ignored: it never breaks the call it was told about.
   */
  onCall(listener: EngineCallListener): () => void;
  /** How many listeners are subscribed (0: the wrapper adds nothing to a call). */
  readonly listenerCount: number;
}

type Call = (params?: unknown) => Promise<unknown>;

/** Wraps `engine`; wrapping an instrumented engine again answers it unchanged. */
export function instrumentEngine(engine: Engine): InstrumentedEngine {
  if (isInstrumented(engine)) return engine;
  const listeners = new Set<EngineCallListener>();
  const wrapper = Object.create(engine) as Record<string, unknown>;
  const calls = engine as unknown as Record<EngineCallName, Call>;
  const forward =
    (name: EngineCallName): Call =>
    (params) =>
      calls[name](params);
  // Own operations of the engine may be found through the prototype; others need forwarding.
  const quiet = new Map<EngineCallName, Call | undefined>(
    ENGINE_CALLS.map((name) => [
      name,
      isOperation(name) && Object.hasOwn(engine, name) ? undefined : forward(name),
    ]),
  );

  const report = (
    operation: EngineCallName,
    params: unknown,
    started: number,
    error: unknown,
    result?: unknown,
  ): void => {
    const event = {
      operation,
      params,
      result,
      engine: engine.name,
      durationMs: performance.now() - started,
      outcome: error === undefined ? 'ok' : 'error',
      errorCode: error === undefined ? null : isLeaseholdError(error) ? error.code : 'internal',
    } as EngineCallEvent;
    for (const listener of listeners) {
      try {
        listener(event);
      } catch {
        // a listener's bug must not break the engine call it was told about
      }
    }
  };

  const timed =
    (name: EngineCallName): Call =>
    (params) => {
      const started = performance.now();
      let pending: Promise<unknown>;
      try {
        pending = calls[name](params);
      } catch (error) {
        report(name, params, started, error ?? new Error('undefined thrown'));
        throw error;
      }
      return pending.then(
        (value) => {
          report(name, params, started, undefined, value);
          return value;
        },
        (error: unknown) => {
          report(name, params, started, error ?? new Error('undefined rejection'));
          throw error;
        },
      );
    };

  const install = (loud: boolean): void => {
    for (const [name, passThrough] of quiet) {
      if (loud) wrapper[name] = timed(name);
      // After a first listener has come and gone: forwarding, not `delete`, which would turn
      // the wrapper into a slow dictionary-mode object for good.
      else wrapper[name] = passThrough ?? forward(name);
    }
  };
  for (const [name, passThrough] of quiet) if (passThrough) wrapper[name] = passThrough;

  Object.defineProperties(wrapper, {
    instrumented: { value: engine },
    listenerCount: { get: () => listeners.size },
    onCall: {
      value: (listener: EngineCallListener): (() => void) => {
        if (listeners.size === 0) install(true);
        listeners.add(listener);
        return () => {
          if (listeners.delete(listener) && listeners.size === 0) install(false);
        };
      },
    },
  });
  return wrapper as unknown as InstrumentedEngine;
}

function isOperation(name: EngineCallName): name is EngineOperationName {
  return name !== 'migrate' && name !== 'now' && name !== 'close';
}

function isInstrumented(engine: Engine): engine is InstrumentedEngine {
  return typeof (engine as Partial<InstrumentedEngine>).onCall === 'function';
}
