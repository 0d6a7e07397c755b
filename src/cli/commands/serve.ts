import type { Command } from 'commander';
import { Leasehold } from '../../leasehold.js';
import { TaskGenerator } from '../../processes/generator.js';
import { defaultHolderId } from '../../runtime/identity.js';
import { hashApiKeys, parseApiKeys } from '../../service/auth.js';
import { SERVICE_DATABASE_OPTIONS, startServer } from '../../service/server.js';
import type { CliContext } from '../context.js';
import { resolveDatabase } from '../database.js';
import { asLogger, processLogger } from '../logger.js';
import { parseIntegerOption } from '../options.js';
import { untilShutdown } from '../shutdown.js';

interface ServeOptions {
  databaseUrl?: string;
  schema: string;
  host: string;
  port: number;
  insecure?: boolean;
  generator: boolean;
  generatorInterval: number;
  generatorTtl: number;
  instanceId?: string;
  logRequests?: boolean;
  maintenanceInterval: number;
}

export function registerServe(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description("run the HTTP lease and task service (and this instance's generator loop)")
    .option(
      '--database-url <url>',
      'PostgreSQL URL (default: DATABASE_URL, else embedded under .leasehold/)',
    )
    .option('--schema <name>', 'schema for the tables', 'leasehold')
    .option('--host <host>', 'address to listen on', process.env.HOST ?? '127.0.0.1')
    .option(
      '--port <port>',
      'port to listen on (0: any free port)',
      parseIntegerOption('--port', 0, 65_535),
      Number(process.env.PORT ?? 4000),
    )
    .option('--insecure', 'allow a non-loopback address without API keys (LEASEHOLD_API_KEYS)')
    .option('--no-generator', 'do not take part in running the task generator')
    .option(
      '--generator-interval <ms>',
      'time between generated tasks',
      parseIntegerOption('--generator-interval', 10, 3_600_000),
      1_000,
    )
    .option(
      '--generator-ttl <ms>',
      'generator lease ttl: the takeover bound after a crash',
      parseIntegerOption('--generator-ttl', 500, 600_000),
      5_000,
    )
    .option('--instance-id <id>', 'name of this instance (default host:pid:random)')
    .option('--log-requests', 'log every HTTP request')
    .option(
      '--maintenance-interval <ms>',
      'time between queue maintenance cycles (rescue, sweep, prune)',
      parseIntegerOption('--maintenance-interval', 50, 3_600_000),
      1_000,
    )
    .action(async (opts: ServeOptions) => {
      const log = processLogger('leasehold-serve');
      // Hashed at once, and the variable dropped from this process's environment, so the plain
      // keys are not kept in memory for the life of the service (decision 0402).
      const apiKeys = hashApiKeys(parseApiKeys(process.env.LEASEHOLD_API_KEYS));
      delete process.env.LEASEHOLD_API_KEYS;
      const database = await resolveDatabase(opts.databaseUrl);
      const lh = await Leasehold.connect({
        connectionString: database.connectionString,
        schema: opts.schema,
        ...SERVICE_DATABASE_OPTIONS,
      });
      const instanceId = opts.instanceId ?? defaultHolderId();
      let generator: TaskGenerator | undefined;
      try {
        await lh.migrate();
        const server = await startServer({
          lh,
          host: opts.host,
          port: opts.port,
          insecure: opts.insecure ?? false,
          apiKeys,
          instanceId,
          maintenance: { interval: opts.maintenanceInterval, logger: asLogger(log) },
          // Request lines are info-level in Fastify: shown only with --log-requests.
          logger: log.child(
            { instance: instanceId },
            { level: opts.logRequests ? 'info' : 'warn' },
          ),
        });
        ctx.out.write(
          `leasehold service ${instanceId} listening on ${server.url} (${database.description})\n`,
        );
        if (opts.generator) {
          generator = new TaskGenerator({
            lh,
            instanceId,
            intervalMs: opts.generatorInterval,
            leaseTtlMs: opts.generatorTtl,
            logger: asLogger(log),
          });
          generator.events.on('generator:leading', (e) =>
            log.info(e, 'this instance now runs the generator'),
          );
          generator.start();
        }
        await untilShutdown();
        log.info({}, 'shutting down');
        await generator?.stop();
        await server.close();
      } finally {
        await lh.close();
        await database.stop();
      }
    });
}
