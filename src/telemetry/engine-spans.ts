/**
 * Spans made from the instrumented engine's call events (decision 0234): claims that took jobs,
 * and lease acquires, renewals and releases. An event arrives once its call settled, with its
 * duration: the span is started back-dated by that much and ended at once.
 *
 * - `receive <queue>` (CONSUMER, a root span) per claim that took at least one job or failed:
 *   an idle worker's empty polls would otherwise fill the trace store. No link per claimed job
 *   to its enqueue context: reading every job's headers cost about 1 µs a job (a few percent
 *   of the burn-down), and each job's `process` span is already that context's child.
 * - `lease acquire|renew|release` (INTERNAL) per lease, with resource, holder, token and result.
 *   A lone call's span is a child of the caller's active span. A coalesced call (many leases in
 *   one statement, decision 0404) runs in the context of whichever caller opened the batch, so
 *   its spans are roots rather than children of some other caller's trace.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  type Attributes,
  type Context,
  type Tracer,
} from '@opentelemetry/api';
import type { Lease } from '../core/types.js';
import type { EngineCallEvent, EngineCallEventOf } from '../engine/instrumented-engine.js';
import {
  LEASE_BATCH_SIZE,
  LEASE_HOLDER,
  LEASE_RESOURCE,
  LEASE_RESULT,
  MESSAGING_BATCH_COUNT,
  MESSAGING_DESTINATION,
  MESSAGING_OPERATION_NAME,
  MESSAGING_OPERATION_TYPE,
  MESSAGING_SYSTEM,
  SYSTEM,
  TOKEN,
  WORKER_ID,
} from './attributes.js';

type LeaseKind = 'acquire' | 'renew' | 'release';

interface LeaseCall {
  kind: LeaseKind;
  resource: string;
  holder: string;
  token: number | undefined;
  result: string | undefined;
}

export class EngineSpans {
  constructor(private readonly tracer: Tracer) {}

  /** The engine-call listener (bound: hand it to `lh.on('engine', ...)`). */
  readonly observe = (call: EngineCallEvent): void => {
    switch (call.operation) {
      case 'jobClaimBatch':
        return this.claim(call);
      case 'leaseAcquire':
        return this.leases(call, [acquireCall(call.params, call.result)], false);
      case 'leaseRenew':
        return this.leases(call, [renewCall(call.params, call.result)], false);
      case 'leaseRelease':
        return this.leases(call, [releaseCall(call.params, call.result)], false);
      case 'leaseAcquireMany':
        return this.leases(
          call,
          call.params.map((p, i) => acquireCall(p, call.result?.[i])),
          true,
        );
      case 'leaseRenewMany':
        return this.leases(
          call,
          call.params.map((p, i) => renewCall(p, call.result?.[i])),
          true,
        );
      case 'leaseReleaseMany':
        return this.leases(
          call,
          call.params.map((p, i) => releaseCall(p, call.result?.[i])),
          true,
        );
    }
  };

  private claim(call: EngineCallEventOf<'jobClaimBatch'>): void {
    const jobs = call.result ?? [];
    if (call.outcome === 'ok' && jobs.length === 0) return;
    const { queues, workerId } = call.params;
    const attributes: Attributes = {
      [MESSAGING_SYSTEM]: SYSTEM,
      [MESSAGING_OPERATION_TYPE]: 'receive',
      [MESSAGING_OPERATION_NAME]: 'claim',
      [MESSAGING_BATCH_COUNT]: jobs.length,
      [WORKER_ID]: workerId,
    };
    if (queues.length === 1) attributes[MESSAGING_DESTINATION] = queues[0]!;
    const name = queues.length === 1 ? `receive ${queues[0]}` : 'receive';
    this.span(name, SpanKind.CONSUMER, attributes, call, ROOT_CONTEXT);
  }

  private leases(call: EngineCallEvent, leases: readonly LeaseCall[], batched: boolean): void {
    const parent = batched ? ROOT_CONTEXT : context.active();
    for (const lease of leases) {
      const attributes: Attributes = {
        [LEASE_RESOURCE]: lease.resource,
        [LEASE_HOLDER]: lease.holder,
      };
      if (lease.token !== undefined) attributes[TOKEN] = lease.token;
      if (lease.result !== undefined) attributes[LEASE_RESULT] = lease.result;
      if (batched) attributes[LEASE_BATCH_SIZE] = leases.length;
      this.span(`lease ${lease.kind}`, SpanKind.INTERNAL, attributes, call, parent);
    }
  }

  private span(
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    call: EngineCallEvent,
    parent: Context,
  ): void {
    const end = performance.timeOrigin + performance.now();
    const span = this.tracer.startSpan(
      name,
      { kind, attributes, startTime: end - call.durationMs },
      parent,
    );
    if (call.outcome === 'error')
      span.setStatus({ code: SpanStatusCode.ERROR, message: call.errorCode ?? 'internal' });
    span.end(end);
  }
}

type AcquireParams = EngineCallEventOf<'leaseAcquire'>['params'];
type RenewParams = EngineCallEventOf<'leaseRenew'>['params'];
type ReleaseParams = EngineCallEventOf<'leaseRelease'>['params'];

function acquireCall(
  params: AcquireParams,
  result: EngineCallEventOf<'leaseAcquire'>['result'],
): LeaseCall {
  return {
    kind: 'acquire',
    resource: params.resource,
    holder: params.holder,
    token: result?.acquired ? result.lease.token : undefined,
    // A re-acquire by the live holder keeps its term: renewedAt is set only then (as 0258 counts).
    result:
      result === undefined
        ? undefined
        : !result.acquired
          ? 'held'
          : result.lease.renewedAt === null
            ? 'acquired'
            : 'extended',
  };
}

function renewCall(params: RenewParams, result: Lease | null | undefined): LeaseCall {
  return {
    kind: 'renew',
    resource: params.resource,
    holder: params.holder,
    token: result?.token ?? params.token,
    result: result === undefined ? undefined : result === null ? 'lost' : 'renewed',
  };
}

function releaseCall(params: ReleaseParams, result: Lease | null | undefined): LeaseCall {
  return {
    kind: 'release',
    resource: params.resource,
    holder: params.holder,
    token: result?.token ?? params.token,
    result: result === undefined ? undefined : result === null ? 'not_held' : 'released',
  };
}
