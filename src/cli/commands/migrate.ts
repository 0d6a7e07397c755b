import type { Command } from 'commander';
import { Leasehold } from '../../leasehold.js';
import { resolveDatabase } from '../database.js';
import type { CliContext } from '../context.js';

export function registerMigrate(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description("create or upgrade leasehold's tables (safe to run from many processes at once)")
    .option(
      '--database-url <url>',
      'PostgreSQL URL (default: DATABASE_URL, else embedded under .leasehold/)',
    )
    .option('--schema <name>', 'schema for the tables', 'leasehold')
    .action(async (opts: { databaseUrl?: string; schema: string }) => {
      const database = await resolveDatabase(opts.databaseUrl);
      const lh = await Leasehold.connect({
        connectionString: database.connectionString,
        schema: opts.schema,
      });
      try {
        const report = await lh.migrate();
        ctx.out.write(
          report.applied.length === 0
            ? `schema "${opts.schema}" is up to date at version ${report.version}\n`
            : `applied migrations ${report.applied.join(', ')}; schema "${opts.schema}" is at version ${report.version}\n`,
        );
      } finally {
        await lh.close();
        await database.stop();
      }
    });
}
