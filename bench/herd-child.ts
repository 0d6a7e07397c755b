/**
 * One process of the idle herd: `tsx bench/herd-child.ts <url> <schema> <workers>` starts that
 * many leasehold workers with their defaults on one empty queue, prints `ready`, and idles
 * until SIGTERM, when it closes cleanly.
 */
import { Leasehold } from '../src/leasehold.js';

const [url, schema, count] = process.argv.slice(2);
const lh = await Leasehold.connect({ connectionString: url!, schema: schema! });
process.once('SIGTERM', () => {
  void lh.close().finally(() => process.exit(0));
});
for (let i = 0; i < Number(count); i++)
  await lh.worker({ queues: 'herd', handler: async () => undefined }).start();
console.log('ready');
