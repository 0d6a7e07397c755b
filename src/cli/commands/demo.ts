import type { Command } from 'commander';
import { Leasehold } from '../../leasehold.js';
import { startDemo, type DemoStopReport } from '../../processes/demo.js';
import { TypedEvents } from '../../runtime/events.js';
import type { ServiceEventMap } from '../../service/context.js';
import { SERVICE_DATABASE_OPTIONS, startServer } from '../../service/server.js';
import type { CliContext } from '../context.js';
import { DATABASE_URL_HELP } from '../connect.js';
import { resolveDatabase } from '../database.js';
import { processLogger } from '../logger.js';
import { parseIntegerOption } from '../options.js';
import { untilShutdown } from '../shutdown.js';

interface DemoOptions {
  databaseUrl?: string;
  schema: string;
  port: number;
  workers: number;
  crashRate: string;
  lease: number;
  generatorInterval: number;
  generatorTtl: number;
  duration?: number;
}

export function registerDemo(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description('run the service, three workers (one crashes now and then) and two generators')
    .option('--database-url <url>', DATABASE_URL_HELP)
    .option('--schema <name>', 'schema for the tables', 'leasehold')
    .option(
      '--port <port>',
      'service port',
      parseIntegerOption('--port', 0, 65_535),
      Number(process.env.PORT ?? 4000),
    )
    .option('--workers <n>', 'worker processes', parseIntegerOption('--workers', 1, 16), 3)
    .option('--crash-rate <p>', 'chance per task that the last worker crashes mid-task', '0.3')
    .option(
      '--lease <ms>',
      'task claim duration',
      parseIntegerOption('--lease', 500, 600_000),
      6_000,
    )
    .option(
      '--generator-interval <ms>',
      'time between generated tasks',
      parseIntegerOption('--generator-interval', 10, 600_000),
      1_500,
    )
    .option(
      '--generator-ttl <ms>',
      'generator lease ttl',
      parseIntegerOption('--generator-ttl', 500, 600_000),
      5_000,
    )
    .option(
      '--duration <seconds>',
      'stop by itself after this long',
      parseIntegerOption('--duration', 1, 86_400),
    )
    .action(async (o: DemoOptions) => {
      // Before anything starts: a Ctrl-C during start-up still ends in the orderly stop below.
      const shutdown = untilShutdown({
        onRepeat: () => ctx.out.write('still stopping: the workers are handing back their tasks\n'),
      });
      const database = await resolveDatabase(o.databaseUrl);
      ctx.out.write(`leasehold demo on ${database.description}\n`);
      let report: DemoStopReport | undefined;
      // The order matters: workers hand back through the service, which needs the database, so
      // the children stop first, then the service, then our connections, and the database last
      // (it runs in a process group of its own, out of reach of the terminal's Ctrl-C).
      try {
        const lh = await Leasehold.connect({
          connectionString: database.connectionString,
          schema: o.schema,
          ...SERVICE_DATABASE_OPTIONS,
        });
        try {
          await lh.migrate();
          // The console shows each lease's terms: their recording is off unless turned on.
          await lh.leases.setTermRecording(true);
          const serviceEvents = new TypedEvents<ServiceEventMap>();
          const server = await startServer({
            lh,
            port: o.port,
            events: serviceEvents,
            logger: processLogger('leasehold-demo').child({}, { level: 'warn' }),
            // Crashed workers' tasks come back within about a second of their lease ending.
            maintenance: { interval: 500, rescueBackoff: { baseMs: 0, capMs: 500 } },
          });
          try {
            const demo = await startDemo({
              lh,
              server,
              serviceEvents,
              out: ctx.out,
              databaseUrl: database.connectionString,
              schema: o.schema,
              workers: o.workers,
              crashRate: Number(o.crashRate),
              leaseMs: o.lease,
              generatorIntervalMs: o.generatorInterval,
              generatorTtlMs: o.generatorTtl,
            });
            const timer = o.duration
              ? setTimeout(() => process.kill(process.pid, 'SIGTERM'), o.duration * 1000)
              : undefined;
            await shutdown;
            clearTimeout(timer);
            report = await demo.stop();
          } finally {
            await server.close();
          }
        } finally {
          await lh.close();
        }
      } finally {
        await database.stop();
      }
      ctx.out.write(
        report.stillClaimed === 0
          ? `demo stopped cleanly: ${plural(report.handedBack, 'task')} handed back, none left claimed\n`
          : `demo stopped: ${plural(report.stillClaimed, 'task')} still claimed (back in the queue when the claim expires)\n`,
      );
    });
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
