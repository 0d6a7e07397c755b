import type { Command } from 'commander';
import { TaskGenerator } from '../../processes/generator.js';
import { GENERATOR_CONTROL } from '../../tasks/task-domain.js';
import { defaultHolderId } from '../../runtime/identity.js';
import { DATABASE_URL_HELP, withLeasehold } from '../connect.js';
import type { CliContext } from '../context.js';
import { asLogger, processLogger } from '../logger.js';
import { parseIntegerOption } from '../options.js';
import { untilShutdown } from '../shutdown.js';

export function registerGenerate(program: Command, ctx: CliContext): void {
  program
    .command('generate')
    .description(
      'take part in running the singleton task generator (one instance generates, others stand by)',
    )
    .option('--database-url <url>', DATABASE_URL_HELP)
    .option('--schema <name>', 'schema for the tables', 'leasehold')
    .option(
      '--interval <ms>',
      'time between generated tasks',
      parseIntegerOption('--interval', 10, 3_600_000),
      1_000,
    )
    .option(
      '--ttl <ms>',
      'generator lease ttl: the takeover bound after a crash',
      parseIntegerOption('--ttl', 500, 600_000),
      5_000,
    )
    .option('--instance-id <id>', 'name of this instance')
    .option('--start', 'also switch the generator on (it is off until started)')
    .action(
      (o: {
        databaseUrl?: string;
        schema: string;
        interval: number;
        ttl: number;
        instanceId?: string;
        start?: boolean;
      }) =>
        withLeasehold(o, async (lh) => {
          const log = processLogger('leasehold-generate');
          const instanceId = o.instanceId ?? defaultHolderId();
          if (o.start)
            await lh.controls.set(GENERATOR_CONTROL, { running: true }, { updatedBy: instanceId });
          const generator = new TaskGenerator({
            lh,
            instanceId,
            intervalMs: o.interval,
            leaseTtlMs: o.ttl,
            logger: asLogger(log),
          });
          generator.events.on('generator:leading', (e) =>
            log.info(e, 'generating on this instance'),
          );
          ctx.out.write(`leasehold generator ${instanceId} standing by\n`);
          generator.start();
          await untilShutdown();
          await generator.stop();
        }),
    );
}
