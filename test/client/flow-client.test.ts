// Flows over HTTP (decision 0255): POST /api/queues/:name/flows through the queue client (201
// created, 200 for a root key already live, 400 naming the field for bad input, nothing
// written), GET /api/jobs/:id with parentId, children and childCount, and explain's
// `children` reason.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { QueueClient } from '../../src/client/queue-client.js';
import { isLeaseholdError } from '../../src/core/errors.js';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const WRITE_KEY = 'writer-key-0123456789';
const READ_KEY = 'reader-key-0123456789';

describe('flows over HTTP', () => {
  it('enqueues a flow, answers a live root key unchanged, refuses bad input, shows the tree', () =>
    withSchema('flow client', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const server = await startServer({
        lh,
        port: 0,
        apiKeys: [
          { name: 'writer', key: WRITE_KEY, scope: 'write' },
          { name: 'reader', key: READ_KEY, scope: 'read' },
        ],
      });
      try {
        const writer = new QueueClient({ baseUrl: server.url, apiKey: WRITE_KEY });
        const reader = new QueueClient({ baseUrl: server.url, apiKey: READ_KEY });
        const runAt = new Date(Date.now() + 3_600_000);
        const flow = await writer.enqueueFlow('reports', {
          payload: { report: 1 },
          options: { key: 'report-1' },
          children: [
            { queue: 'parts', payload: 1, options: { parentPolicy: 'ignore', runAt } },
            { queue: 'parts', payload: 2, options: { delay: '1m' } },
          ],
        });
        assert.equal(flow.created, true);
        assert.deepEqual(
          [flow.job.status, flow.job.parentId, flow.children.map((c) => c.job.parentId)],
          ['waiting', null, [flow.job.id, flow.job.id]],
        );
        assert.equal(flow.children[0]!.job.availableAt, runAt.toISOString());
        assert.deepEqual(await writer.explainJob(flow.job.id), {
          reason: 'children',
          unfinished: 2,
        });

        const again = await writer.enqueueFlow('reports', {
          payload: { report: 2 },
          options: { key: 'report-1' },
          children: [{ queue: 'parts', payload: 3 }],
        });
        assert.deepEqual([again.created, again.job.id, again.children], [false, flow.job.id, []]);

        for (const [field, body] of [
          ['children[0].options.key', { queue: 'parts', payload: 1, options: { key: 'k' } }],
          [
            'children[0].options.parentPolicy',
            { queue: 'parts', payload: 1, options: { parentPolicy: 'x' } },
          ],
          ['children[0].options.runAt', { queue: 'parts', payload: 1, options: { runAt: 'soon' } }],
        ] as const)
          await assert.rejects(
            writer.enqueueFlow('reports', { payload: 1, children: [body as never] }),
            (e: unknown) => isLeaseholdError(e, 'invalid_argument') && e.details.field === field,
            field,
          );
        await assert.rejects(
          writer.enqueueFlow('reports', { payload: 1, children: [] }),
          (e: unknown) => isLeaseholdError(e, 'invalid_argument'),
        );
        await assert.rejects(
          reader.enqueueFlow('reports', { payload: 1, children: [{ queue: 'parts', payload: 1 }] }),
          (e: unknown) => isLeaseholdError(e, 'forbidden'),
        );
        assert.equal((await lh.jobs.list()).length, 3, 'bad input wrote nothing');

        const detail = await fetch(`${server.url}/api/jobs/${flow.job.id}`, {
          headers: { authorization: `Bearer ${READ_KEY}` },
        });
        const shown = (await detail.json()) as Record<string, unknown>;
        assert.deepEqual([shown.parentId, shown.childCount], [null, 2]);
        assert.deepEqual(shown.children, [
          {
            id: flow.children[0]!.job.id,
            queue: 'parts',
            type: null,
            status: 'pending',
            parentPolicy: 'ignore',
          },
          {
            id: flow.children[1]!.job.id,
            queue: 'parts',
            type: null,
            status: 'pending',
            parentPolicy: 'fail-parent',
          },
        ]);
        const child = await fetch(`${server.url}/api/jobs/${flow.children[1]!.job.id}`, {
          headers: { authorization: `Bearer ${READ_KEY}` },
        });
        const childShown = (await child.json()) as Record<string, unknown>;
        assert.deepEqual(
          [childShown.parentId, childShown.children, childShown.childCount],
          [flow.job.id, [], 0],
        );
      } finally {
        await server.close();
      }
    }));
});
