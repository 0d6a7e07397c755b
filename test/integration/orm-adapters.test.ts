/**
 * The ORM adapters (leasehold/kysely, /knex, /drizzle, /typeorm, /prisma) against the real
 * packages and the real database: each ORM opens its own transaction the way its users do, does
 * a business write with its own API, and hands leasehold the transaction through its adapter.
 * For each ORM: a job enqueued in a transaction that rolls back does not exist, one that commits
 * is claimed and run; complete(tx) and a fence check commit or roll back with the business write;
 * enqueueFlow joins the transaction; rows come back in the shapes node-postgres gives, and a
 * failed statement keeps its SQLSTATE.
 *
 * Prisma needs a generated client: before() runs `prisma generate` offline into a scratch
 * directory (PRISMA_SCHEMA_ENGINE_BINARY=/bin/false: generating the TypeScript client needs no
 * engine binary, and without it Prisma would try to download one).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { CamelCasePlugin, Kysely, PostgresDialect, type Generated } from 'kysely';
import knexFactory, { type Knex } from 'knex';
import { drizzle } from 'drizzle-orm/node-postgres';
import { pgSchema, serial, text } from 'drizzle-orm/pg-core';
import { DataSource } from 'typeorm';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { fromDrizzle, parseTimestamptz } from '../../src/adapters/drizzle.js';
import { fromKnex, knexSql } from '../../src/adapters/knex.js';
import { fromKysely } from '../../src/adapters/kysely.js';
import { fromPrisma, type PrismaRawClient } from '../../src/adapters/prisma.js';
import { fromTypeORM } from '../../src/adapters/typeorm.js';
import { InvalidArgumentError, isLeaseholdError } from '../../src/core/errors.js';
import type { CallerTransaction } from '../../src/engine/types.js';
import type { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

/** Undoes the ORM's transaction: thrown from inside it, caught outside. */
class Rollback extends Error {}

/** One ORM, connected to the test database, with its transaction and its own business write. */
interface Orm {
  /**
   * Runs `fn` in the ORM's transaction; `tx` is leasehold's view of it (the adapter's), `write`
   * inserts a note with the ORM's own API. A throw rolls the transaction back.
   */
  transaction<T>(
    fn: (tx: CallerTransaction, write: (note: string) => Promise<void>) => Promise<T>,
  ): Promise<T>;
  /** The adapter given a value it cannot handle (the ORM's root object where it needs more). */
  misuse(): unknown;
  close(): Promise<void>;
}

type OrmFactory = (url: string, schema: string) => Promise<Orm>;

/** The generated Prisma client's constructor (generated at test time, so typed by hand). */
type PrismaClientClass = new (options: { adapter: PrismaPg }) => PrismaRawClient & {
  $transaction<T>(
    fn: (
      tx: PrismaRawClient & { $executeRawUnsafe(q: string, ...v: unknown[]): Promise<number> },
    ) => Promise<T>,
    options?: { timeout?: number; maxWait?: number },
  ): Promise<T>;
  $disconnect(): Promise<void>;
};
let PrismaClient: PrismaClientClass | undefined;
let prismaDir: string | undefined;

const ORMS: Record<string, OrmFactory> = {
  kysely: async (url, schema) => {
    // CamelCasePlugin would rename leasehold's columns: the adapter runs without plugins.
    const db = new Kysely<{ notes: { id: Generated<number>; note: string } }>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }),
      plugins: [new CamelCasePlugin()],
    });
    return {
      transaction: (fn) =>
        db.transaction().execute((trx) =>
          fn(fromKysely(trx), async (note) => {
            await trx.withSchema(schema).insertInto('notes').values({ note }).execute();
          }),
        ),
      misuse: () => fromKysely(db as never), // the Kysely instance, not a transaction
      close: () => db.destroy(),
    };
  },
  knex: async (url, schema) => {
    const db: Knex = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 2 } });
    return {
      transaction: (fn) =>
        db.transaction((trx) =>
          fn(fromKnex(trx), async (note) => {
            await trx.withSchema(schema).insert({ note }).into('notes');
          }),
        ),
      misuse: () => fromKnex(db as never), // the knex instance, not a transaction
      close: () => db.destroy(),
    };
  },
  drizzle: async (url, schema) => {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const notes = pgSchema(schema).table('notes', {
      id: serial('id').primaryKey(),
      note: text('note').notNull(),
    });
    const db = drizzle(pool);
    return {
      transaction: (fn) =>
        db.transaction((tx) =>
          fn(fromDrizzle(tx), async (note) => {
            await tx.insert(notes).values({ note });
          }),
        ),
      misuse: () => fromDrizzle(db as never), // the database object, not a transaction
      close: () => pool.end(),
    };
  },
  typeorm: async (url, schema) => {
    const dataSource = new DataSource({ type: 'postgres', url, poolSize: 2 });
    await dataSource.initialize();
    return {
      transaction: (fn) =>
        dataSource.transaction((manager) =>
          fn(fromTypeORM(manager), async (note) => {
            await manager.query(`INSERT INTO "${schema}".notes (note) VALUES ($1)`, [note]);
          }),
        ),
      // The data source's own manager runs each statement on some pooled connection.
      misuse: () => fromTypeORM(dataSource.manager),
      close: () => dataSource.destroy(),
    };
  },
  prisma: async (url, schema) => {
    assert.ok(PrismaClient, 'the Prisma client was generated');
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 2 }) });
    return {
      transaction: (fn) =>
        prisma.$transaction(
          (tx) =>
            fn(fromPrisma(tx), async (note) => {
              await tx.$executeRawUnsafe(`INSERT INTO "${schema}".notes (note) VALUES ($1)`, note);
            }),
          // Prisma ends an interactive transaction after 5 s by default; a loaded machine may
          // need longer, and leasehold's behaviour does not depend on it.
          { timeout: 60_000, maxWait: 30_000 },
        ),
      misuse: () => fromPrisma(prisma), // the PrismaClient, not its transaction's client
      close: () => prisma.$disconnect(),
    };
  },
};

before(async () => {
  // `prisma generate` offline, into a scratch directory whose node_modules is this project's.
  prismaDir = await mkdtemp(join(tmpdir(), 'leasehold-prisma-'));
  const root = new URL('../..', import.meta.url).pathname;
  await mkdir(join(prismaDir, 'prisma'));
  await symlink(await realpath(join(root, 'node_modules')), join(prismaDir, 'node_modules'));
  await writeFile(
    join(prismaDir, 'prisma', 'schema.prisma'),
    [
      'generator client {',
      '  provider = "prisma-client"',
      '  output   = "../generated"',
      '}',
      'datasource db {',
      '  provider = "postgresql"',
      '}',
    ].join('\n'),
  );
  await writeFile(
    join(prismaDir, 'prisma.config.ts'),
    "import { defineConfig } from 'prisma/config';\nexport default defineConfig({ schema: 'prisma/schema.prisma' });\n",
  );
  await promisify(execFile)(
    process.execPath,
    [join(root, 'node_modules', 'prisma', 'build', 'index.js'), 'generate'],
    { cwd: prismaDir, env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false' } },
  );
  const generated = join(prismaDir, 'generated', 'client.ts');
  ({ PrismaClient } = (await import(generated)) as { PrismaClient: PrismaClientClass });
});

after(async () => {
  if (prismaDir) await rm(prismaDir, { recursive: true, force: true });
});

interface Setup {
  lh: Leasehold;
  engine: PostgresEngine;
  orm: Orm;
  notes(): Promise<string[]>;
}

/** A fresh schema with a notes table, leasehold on it, and the ORM connected. */
function withOrm(name: string, factory: OrmFactory, test: string, fn: (s: Setup) => Promise<void>) {
  return withSchema(`${name} ${test}`, async (ctx) => {
    const engine = await ctx.engine();
    await engine.pool.query(
      `CREATE TABLE "${ctx.schema}".notes (id serial PRIMARY KEY, note text NOT NULL)`,
    );
    const orm = await factory(ctx.url, ctx.schema);
    const notes = async (): Promise<string[]> =>
      (
        await engine.pool.query<{ note: string }>(
          `SELECT note FROM "${ctx.schema}".notes ORDER BY id`,
        )
      ).rows.map((r) => r.note);
    try {
      await fn({ lh: Leasehold.fromEngine(engine), engine, orm, notes });
    } finally {
      await orm.close();
    }
  });
}

async function rolledBack(promise: Promise<unknown>): Promise<void> {
  await assert.rejects(promise, (e: unknown) => e instanceof Rollback);
}

async function jobCount(engine: PostgresEngine): Promise<number> {
  const { rows } = await engine.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "${engine.schema}".jobs`,
  );
  return rows[0]!.n;
}

for (const [name, factory] of Object.entries(ORMS)) {
  describe(`${name} adapter`, () => {
    it('a job enqueued in a transaction that rolls back does not exist', () =>
      withOrm(name, factory, 'rollback', async ({ lh, engine, orm, notes }) => {
        let enqueued: { id: number } | undefined;
        await rolledBack(
          orm.transaction(async (tx, write) => {
            await write('order 1');
            enqueued = await lh.queue('emails').enqueue({ order: 1 }, { tx });
            await lh.queue('emails').enqueue({ order: 1 }, { tx, key: 'order-1' });
            throw new Rollback();
          }),
        );
        assert.ok(enqueued, 'the enqueue ran inside the transaction');
        assert.equal(await engine.jobGet({ id: enqueued.id }), null);
        assert.equal(await jobCount(engine), 0);
        assert.deepEqual(await notes(), []);
      }));

    it('a job enqueued in a transaction that commits is claimed and run', () =>
      withOrm(name, factory, 'commit', async ({ lh, engine, orm, notes }) => {
        const [plain, keyed] = await orm.transaction(async (tx, write) => {
          await write('order 2');
          return [
            await lh.queue('emails').enqueue({ order: 2 }, { tx }),
            await lh.queue('emails').enqueue({ order: 2, keyed: true }, { tx, key: 'order-2' }),
          ];
        });
        assert.deepEqual(await notes(), ['order 2']);
        // The job the ORM's rows made is the job as the pool reads it: same types, same values.
        const { created, replaced, ...job } = keyed;
        assert.deepEqual([created, replaced], [true, false]);
        assert.deepEqual(job, await engine.jobGet({ id: keyed.id }));
        assert.ok(job.createdAt instanceof Date && typeof job.id === 'number');
        assert.equal(
          plain.availableAt.getTime(),
          (await engine.jobGet({ id: plain.id }))!.availableAt.getTime(),
        );

        const ran: unknown[] = [];
        const worker = lh.worker({
          queues: 'emails',
          pollInterval: 50,
          handler: async (j) => void ran.push(j.payload),
        });
        await worker.start();
        try {
          await waitFor('both jobs completed', async () => {
            const a = await engine.jobGet({ id: plain.id });
            const b = await engine.jobGet({ id: keyed.id });
            return a?.status === 'completed' && b?.status === 'completed';
          });
        } finally {
          await worker.stop();
        }
        assert.deepEqual(
          ran.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
          [{ keyed: true, order: 2 }, { order: 2 }],
        );
      }));

    it('complete(tx) commits or rolls back with the business write', () =>
      withOrm(name, factory, 'complete', async ({ lh, engine, orm, notes }) => {
        const job = await lh.queue('billing').enqueue('invoice', { maxAttempts: 2 });
        const seenAfterRollback: string[] = [];
        const worker = lh.worker({
          queues: 'billing',
          pollInterval: 50,
          retryBackoff: { baseMs: 0, capMs: 0 },
          handler: async (j, ctx) => {
            const undo = ctx.attempt === 1;
            await orm
              .transaction(async (tx, write) => {
                await write(`invoice ${j.id} attempt ${ctx.attempt}`);
                await ctx.complete(tx, { invoiced: ctx.attempt });
                if (undo) throw new Rollback();
              })
              .catch(async (error: unknown) => {
                if (!(error instanceof Rollback)) throw error;
                // Rolled back: the completion went with the write; the job is still this
                // attempt's, processing.
                seenAfterRollback.push((await engine.jobGet({ id: j.id }))!.status);
                seenAfterRollback.push(...(await notes()));
                throw new Error('the invoice transaction rolled back');
              });
          },
        });
        await worker.start();
        try {
          await waitFor('the job completed', async () => {
            const j = await engine.jobGet({ id: job.id });
            return j?.status === 'completed' ? j : undefined;
          });
        } finally {
          await worker.stop();
        }
        assert.deepEqual(seenAfterRollback, ['processing']);
        const done = (await engine.jobGet({ id: job.id }))!;
        assert.equal(done.attempts, 2);
        assert.deepEqual(done.result, { invoiced: 2 });
        assert.deepEqual(await notes(), [`invoice ${job.id} attempt 2`]);
      }));

    it('a fence check refuses a stale token and its business write rolls back', () =>
      withOrm(name, factory, 'fence', async ({ lh, orm, notes }) => {
        const fence = lh.fence('ledger');
        await orm.transaction(async (tx, write) => {
          await fence.check(tx, 5);
          await write('written under token 5');
        });
        await assert.rejects(
          orm.transaction(async (tx, write) => {
            await write('written under token 3');
            await fence.check(tx, 3);
          }),
          (e: unknown) => isLeaseholdError(e, 'stale_token') && e.details['newest'] === 5,
        );
        // A checked token rolled back with its transaction records nothing.
        await rolledBack(
          orm.transaction(async (tx) => {
            await fence.check(tx, 9);
            throw new Rollback();
          }),
        );
        assert.equal(await fence.get(), 5);
        assert.deepEqual(await notes(), ['written under token 5']);
      }));

    it('enqueueFlow joins the transaction: nothing after a rollback, the tree after a commit', () =>
      withOrm(name, factory, 'flow', async ({ lh, engine, orm }) => {
        const definition = (tx: CallerTransaction) => ({
          payload: 'report',
          options: { tx },
          children: [
            { queue: 'parts', payload: 'a' },
            { queue: 'parts', payload: 'b' },
          ],
        });
        await rolledBack(
          orm.transaction(async (tx) => {
            await lh.queue('reports').enqueueFlow(definition(tx));
            throw new Rollback();
          }),
        );
        assert.equal(await jobCount(engine), 0);
        const flow = await orm.transaction((tx) => lh.queue('reports').enqueueFlow(definition(tx)));
        assert.equal(flow.created, true);
        assert.equal((await engine.jobGet({ id: flow.job.id }))?.status, 'waiting');
        assert.deepEqual(
          await Promise.all(
            flow.children.map(async (c) => (await engine.jobGet({ id: c.job.id }))?.status),
          ),
          ['pending', 'pending'],
        );
        assert.equal(await jobCount(engine), 3);
      }));

    it("answers rows in node-postgres's shapes and keeps a failed statement's SQLSTATE", () =>
      withOrm(name, factory, 'shapes', async ({ orm }) => {
        const at = new Date('2026-11-23T13:29:27.123Z');
        const row = await orm
          .transaction(async (tx) => {
            const { rows } = await tx.query(
              `SELECT $1::bigint AS big, $2::jsonb AS doc, $3::int AS small, $4::timestamptz AS at,
                    $5::text[] AS list, $6::timestamptz AS absent, $1::bigint + 0 AS again,
                    timestamptz '2026-11-23 13:29:27.123999+00' AS precise`,
              ['9007199254740991', '{"a":[1,"x"]}', 7, at, ['p', 'q'], null],
            );
            await assert.rejects(tx.query('SELECT 1 / $1::int', [0]), (e: unknown) => {
              assert.equal((e as { code?: unknown }).code, '22012');
              return true;
            });
            throw Object.assign(new Rollback(), { row: rows[0] });
          })
          .catch((e: unknown) => {
            if (!(e instanceof Rollback)) throw e;
            return (e as Rollback & { row: unknown }).row;
          });
        assert.deepEqual(row, {
          big: '9007199254740991',
          doc: { a: [1, 'x'] },
          small: 7,
          at,
          list: ['p', 'q'],
          absent: null,
          again: '9007199254740991',
          precise: new Date('2026-11-23T13:29:27.123Z'),
        });
      }));

    it('refuses a value it cannot handle with invalid_argument naming tx', () =>
      withOrm(name, factory, 'misuse', async ({ orm }) => {
        assert.throws(
          () => orm.misuse(),
          (e: unknown) => e instanceof InvalidArgumentError && e.field === 'tx',
        );
      }));
  });
}

describe('adapter details', () => {
  it('knexSql rewrites $n to ? (a value per use) and escapes literal question marks', () => {
    assert.deepEqual(knexSql(`SELECT $2, $1, $2, doc ? 'k', doc ?| $3`, ['a', 'b', ['k']]), {
      sql: `SELECT ?, ?, ?, doc \\? 'k', doc \\?| ?`,
      bindings: ['b', 'a', 'b', ['k']],
    });
    assert.throws(() => knexSql('SELECT $2', ['a']), RangeError);
  });

  it("knex runs jsonb's ? operators in leasehold's text", () =>
    withSchema('knex question marks', async (ctx) => {
      const db = knexFactory({ client: 'pg', connection: ctx.url, pool: { min: 0, max: 1 } });
      try {
        const row = await db.transaction(async (trx) => {
          const { rows } = await fromKnex(trx).query(
            `SELECT '{"a":1}'::jsonb ? $1 AS has, '{"a":1}'::jsonb ?| $2::text[] AS any, $1 AS key`,
            ['a', ['z', 'a']],
          );
          return rows[0];
        });
        assert.deepEqual(row, { has: true, any: true, key: 'a' });
      } finally {
        await db.destroy();
      }
    }));

  it('parseTimestamptz reads PostgreSQL text as node-postgres does', () => {
    const pgParse = pg.types.getTypeParser(1184, 'text') as (t: string) => Date;
    for (const text of [
      '2026-11-23 13:29:27.123999+00',
      '2026-11-23 13:29:27+00',
      '2026-11-23 13:29:27.5-03',
      '2026-01-01 00:00:00.000001+05:30',
      '1999-12-31 23:59:59.999+14',
    ])
      assert.equal(parseTimestamptz(text).getTime(), pgParse(text).getTime(), text);
    assert.throws(() => parseTimestamptz('infinity'), RangeError);
  });

  it('fromTypeORM takes a QueryRunner in a transaction', () =>
    withSchema('typeorm query runner', async (ctx) => {
      const engine = await ctx.engine();
      const lh = Leasehold.fromEngine(engine);
      const dataSource = new DataSource({ type: 'postgres', url: ctx.url, poolSize: 1 });
      await dataSource.initialize();
      try {
        for (const outcome of ['rollback', 'commit'] as const) {
          const runner = dataSource.createQueryRunner();
          await runner.connect();
          try {
            await runner.startTransaction();
            await lh.queue('runner').enqueue(outcome, { tx: fromTypeORM(runner) });
            if (outcome === 'commit') await runner.commitTransaction();
            else await runner.rollbackTransaction();
          } finally {
            await runner.release();
          }
        }
        const { rows } = await engine.pool.query<{ payload: string }>(
          `SELECT payload FROM "${ctx.schema}".jobs`,
        );
        assert.deepEqual(
          rows.map((r) => r.payload),
          ['commit'],
        );
      } finally {
        await dataSource.destroy();
      }
    }));
});
