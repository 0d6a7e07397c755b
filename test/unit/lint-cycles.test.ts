// `npm run lint` refuses import cycles through dependency-cruiser (.dependency-cruiser.cjs,
// decision 0232). This runs the checker with the project's own configuration on small fixtures:
// it must fail on a value cycle and on a type-only one, and pass an acyclic graph.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = new URL('../..', import.meta.url).pathname;

interface Run {
  readonly code: number;
  readonly output: string;
}

/** Runs the cycle check of `npm run lint` on a folder of fixture modules. */
async function cruise(files: Record<string, string>): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-cycles-'));
  try {
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return await new Promise<Run>((resolve, reject) => {
      execFile(
        join(root, 'node_modules/.bin/depcruise'),
        [dir, '--config', '.dependency-cruiser.cjs', '--output-type', 'err'],
        { cwd: root },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          if (code === -1) reject(error);
          else resolve({ code, output: stdout + stderr });
        },
      );
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the import-cycle check', () => {
  it('fails on a cycle of value imports', async () => {
    const run = await cruise({
      'a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    });
    assert.notEqual(run.code, 0, run.output);
    assert.match(run.output, /no-circular/);
    assert.match(run.output, /a\.ts/);
  });

  it('fails on a cycle of type-only imports', async () => {
    const run = await cruise({
      'a.ts': "import type { B } from './b.js';\nexport interface A { b: B }\n",
      'b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
    });
    assert.notEqual(run.code, 0, run.output);
    assert.match(run.output, /no-circular/);
  });

  it('fails on a longer cycle mixing value and type imports', async () => {
    const run = await cruise({
      'a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'b.ts': "import type { C } from './c.js';\nexport const b: C | 1 = 1;\n",
      'c.ts': "import { a } from './a.js';\nexport type C = typeof a;\n",
    });
    assert.notEqual(run.code, 0, run.output);
    assert.match(run.output, /no-circular/);
  });

  it('passes a graph without cycles', async () => {
    const run = await cruise({
      'a.ts':
        "import type { B } from './b.js';\nimport { c } from './c.js';\nexport const a: B = c;\n",
      'b.ts': "import { c } from './c.js';\nexport type B = typeof c;\n",
      'c.ts': 'export const c = 1;\n',
    });
    assert.equal(run.code, 0, run.output);
  });
});
