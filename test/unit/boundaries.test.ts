// The import boundaries are a lint rule; this proves the rule fires for each boundary.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function restrictedImports(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports')
    .map((m) => m.message);
}

describe('import boundaries', () => {
  it('rejects core/ importing anything else of ours', async () => {
    const messages = await restrictedImports(
      'src/core/example.ts',
      "import '../leases/lease-manager.js';\n",
    );
    assert.match(messages.join(), /pure leaf/);
  });

  it('rejects an engine importing the layers above it', async () => {
    const messages = await restrictedImports(
      'src/engine/postgres/example.ts',
      "import '../../leases/lease-manager.js';\n",
    );
    assert.match(messages.join(), /engines import only core/);
  });

  it('rejects client/ importing pg', async () => {
    const messages = await restrictedImports(
      'src/client/example.ts',
      "import pg from 'pg';\nexport default pg;\n",
    );
    assert.match(messages.join(), /never imports pg/);
  });

  it('rejects src/ importing test/', async () => {
    const messages = await restrictedImports(
      'src/leases/example.ts',
      "import '../../test/support/wait.js';\n",
    );
    assert.match(messages.join(), /never imports test/);
  });

  for (const [from, target] of [
    ['src/leases/example.ts', '../service/context.js'],
    ['src/queue/maintenance/example.ts', '../../processes/generator.js'],
    ['src/runtime/example.ts', '../cli/connect.js'],
    ['src/tasks/example.ts', '../service/routes/tasks.js'],
    ['src/example.ts', './processes/demo.js'],
    ['src/engine/example.ts', '../service/context.js'],
    ['src/client/example.ts', '../cli/main.js'],
  ] as const)
    it(`rejects the toolkit importing an application: ${from} -> ${target}`, async () => {
      // A type-only import ties the designs together just the same: refused too.
      for (const line of [`import '${target}';\n`, `import type { X } from '${target}';\n`]) {
        const messages = await restrictedImports(from, line);
        assert.equal(messages.length, 1, `${from}: ${line}`);
      }
    });

  it('rejects service/ importing processes/ or cli/, and processes/ importing cli/', async () => {
    const breaches: [string, string][] = [
      ['src/service/snapshot-example.ts', '../processes/generator.js'],
      ['src/service/routes/example.ts', '../../cli/connect.js'],
      ['src/processes/example.ts', '../cli/connect.js'],
    ];
    for (const [from, target] of breaches) {
      const messages = await restrictedImports(from, `import '${target}';\n`);
      assert.match(
        messages.join(),
        /never imports (processes\/ or )?cli\//,
        `${from} -> ${target}`,
      );
    }
  });

  it('allows an application to import the toolkit and the applications below it', async () => {
    const allowed: [string, string][] = [
      ['src/service/example.ts', '../tasks/task-domain.js'],
      ['src/processes/example.ts', '../service/server.js'],
      ['src/cli/commands/example.ts', '../../processes/generator.js'],
      ['src/cli/commands/example.ts', '../../service/server.js'],
      ['src/leases/example.ts', '../runtime/coalescer.js'],
    ];
    for (const [from, target] of allowed)
      assert.deepEqual(await restrictedImports(from, `import '${target}';\n`), [], from);
  });

  it('allows an engine to import core/', async () => {
    assert.deepEqual(
      await restrictedImports('src/engine/example.ts', "import '../core/errors.js';\n"),
      [],
    );
  });
});
