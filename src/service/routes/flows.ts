/**
 * Flows over HTTP (decision 0255): POST /api/queues/:name/flows enqueues a flow as
 * `lh.queue(name).enqueueFlow` does (write scope, as enqueueing a task), with the library's one
 * validator: bad input is a 400 `invalid_argument` naming the field by its path
 * (`children[0].options.key`), and nothing is written. `runAt` is an ISO instant here, the
 * durations milliseconds or strings such as `'10s'`.
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { InvalidArgumentError } from '../../core/errors.js';
import type { FlowChild, FlowDefinition, FlowJob } from '../../queue/job-flows.js';
import type { ServiceContext } from '../context.js';
import { ErrorResponse } from '../schemas/common.js';
import { FlowAnswer, FlowBody } from '../schemas/flows.js';
import { QueueParams } from '../schemas/queues.js';
import { jobJson } from '../serialize.js';

const errors = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  409: ErrorResponse,
  503: ErrorResponse,
};

export function flowRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.post<{ Params: Static<typeof QueueParams>; Body: Static<typeof FlowBody> }>(
    '/api/queues/:name/flows',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'createFlow',
        tags: ['queues'],
        summary:
          'Enqueue a flow: the root job on this queue runs once its children are done (201), or the live job holding the root key (200, nothing written).',
        params: QueueParams,
        body: FlowBody,
        response: { 200: FlowAnswer, 201: FlowAnswer, ...errors },
      },
      handler: async (request, reply) => {
        const flow = await ctx.lh
          .queue(request.params.name)
          .enqueueFlow(fromJson(request.body as FlowDefinition));
        return reply.code(flow.created ? 201 : 200).send({ created: flow.created, ...tree(flow) });
      },
    },
  );
}

function tree(node: FlowJob): { job: ReturnType<typeof jobJson>; children: unknown[] } {
  return { job: jobJson(node.job), children: node.children.map(tree) };
}

/** The library's definition from the JSON one: `runAt` strings become Dates; no `tx`. */
function fromJson(flow: FlowDefinition): FlowDefinition {
  if (flow.options && 'tx' in flow.options)
    throw new InvalidArgumentError('options.tx', 'is not an option over HTTP');
  const children = (nodes: unknown): unknown =>
    Array.isArray(nodes) ? nodes.map((child) => withDates(child)) : nodes;
  const withDates = (node: unknown): unknown => {
    if (typeof node !== 'object' || node === null) return node;
    const n = node as FlowChild;
    return {
      ...n,
      ...(n.options === undefined ? {} : { options: datedOptions(n.options) }),
      ...(n.children === undefined ? {} : { children: children(n.children) }),
    };
  };
  return {
    ...flow,
    ...(flow.options === undefined ? {} : { options: datedOptions(flow.options) }),
    children: children(flow.children) as FlowChild[],
  };
}

function datedOptions<T extends { runAt?: Date }>(options: T): T {
  if (typeof options !== 'object' || options === null) return options;
  const runAt: unknown = options.runAt;
  return typeof runAt === 'string' ? { ...options, runAt: new Date(runAt) } : options;
}
