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

  it('allows an engine to import core/', async () => {
    assert.deepEqual(
      await restrictedImports('src/engine/example.ts', "import '../core/errors.js';\n"),
      [],
    );
  });
});
