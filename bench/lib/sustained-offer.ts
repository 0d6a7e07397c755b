/**
 * The offering process of the sustained-load scenario (sustained.ts): enqueues into one system's
 * schema through that system's own client, at a fixed rate, each job stamped with its send time
 * in absolute milliseconds. Prints `pacing` when it starts and `sent <n>` when it is done.
 *
 *   tsx bench/lib/sustained-offer.ts <leasehold|graphile|pgboss> <url> <schema> <rate> <seconds>
 */
import { Logger, makeWorkerUtils } from 'graphile-worker';
import { Leasehold } from '../../src/leasehold.js';
import { startBoss } from '../peers/pgboss.js';
import {
  OFFERING_CLIENTS,
  pace,
  SUSTAINED_QUEUE,
  SUSTAINED_TASK,
  type OfferingClient,
} from './sustained.js';

async function enqueuer(
  client: OfferingClient,
  url: string,
  schema: string,
): Promise<{
  enqueue: (count: number, sentAt: number) => Promise<void>;
  close: () => Promise<void>;
}> {
  if (client === 'leasehold') {
    const lh = await Leasehold.connect({ connectionString: url, schema });
    const queue = lh.queue(SUSTAINED_QUEUE);
    return {
      enqueue: async (count, t) => {
        await queue.enqueueMany(Array.from({ length: count }, () => ({ payload: { t } })));
      },
      close: () => lh.close(),
    };
  }
  if (client === 'pgboss') {
    // The worker's side made the schema and the queue (with `notify`, so each insert wakes it).
    const boss = await startBoss(url, schema, false);
    return {
      enqueue: async (count, t) => {
        await boss.insert(
          SUSTAINED_QUEUE,
          Array.from({ length: count }, () => ({ data: { t } })),
        );
      },
      close: () => boss.stop({ graceful: false }),
    };
  }
  const utils = await makeWorkerUtils({
    connectionString: url,
    schema,
    logger: new Logger(() => () => {}),
  });
  return {
    enqueue: async (count, t) => {
      await utils.addJobs(
        Array.from({ length: count }, () => ({ identifier: SUSTAINED_TASK, payload: { t } })),
      );
    },
    close: async () => {
      await utils.release();
    },
  };
}

const [client, url, schema, rate, seconds] = process.argv.slice(2);
if (
  !OFFERING_CLIENTS.includes(client as OfferingClient) ||
  !url ||
  !schema ||
  !(Number(rate) > 0) ||
  !(Number(seconds) > 0)
) {
  process.stderr.write(
    `usage: sustained-offer.ts <${OFFERING_CLIENTS.join('|')}> <url> <schema> <rate> <seconds>\n`,
  );
  process.exit(2);
}
const { enqueue, close } = await enqueuer(client as OfferingClient, url, schema);
process.stdout.write('pacing\n');
const sent = await pace(enqueue, Number(rate), Number(seconds));
process.stdout.write(`sent ${sent}\n`);
await close();
