// POST /api/tasks whose statement committed but whose answer was lost on the way back from
// PostgreSQL: the service answers 503 saying the outcome is unknown (not "retry later" alone,
// which invites a blind retry that creates the task twice), and the task exists once (0220).
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import pg from 'pg';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { buildApp } from '../../src/service/app.js';
import { AnswerCutter } from '../support/answer-cutter.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { call } from '../support/service.js';

after(closeTestDatabase);

it('answers 503 with outcome unknown when a created task lost its answer after commit', () =>
  withSchema('task answer lost', async (ctx) => {
    await ctx.engine(); // migrates the schema
    const url = new URL(ctx.url);
    const cutter = new AnswerCutter(url.hostname, Number(url.port));
    url.hostname = '127.0.0.1';
    url.port = String(await cutter.listen());
    const engine = new PostgresEngine({ connectionString: url.toString(), schema: ctx.schema });
    const app = await buildApp({ lh: Leasehold.fromEngine(engine) });
    try {
      assert.equal(
        (await call(app, 'POST', '/api/tasks', { task_data: { m: 'warm' } })).status,
        201,
      );
      cutter.arm(['cut-task']);
      const answer = await call(app, 'POST', '/api/tasks', { task_data: { m: 'cut-task' } });
      await cutter.cut;
      assert.equal(answer.status, 503, answer.text);
      const error = answer.body.error as { code: string; message: string; details?: unknown };
      assert.equal(error.code, 'unavailable');
      assert.deepEqual(error.details, { outcome: 'unknown' });
      assert.match(error.message, /outcome is unknown/);
      const direct = new pg.Client({ connectionString: ctx.url });
      await direct.connect();
      const { rows } = await direct.query(
        `SELECT count(*)::int AS n FROM "${ctx.schema}".jobs WHERE payload->>'m' = 'cut-task'`,
      );
      await direct.end();
      assert.equal(rows[0].n, 1);
    } finally {
      await app.close();
      await engine.close();
      await cutter.close();
    }
  }));
