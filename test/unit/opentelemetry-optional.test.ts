// `@opentelemetry/api` is an optional peer dependency (decision 0260): no entry of the package
// but `leasehold/opentelemetry` may reach it, by a value or a type import (a type in a public
// declaration would break the types of a program without the package). This walks the import
// graph of each entry in package.json's exports from its source file.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = new URL('../..', import.meta.url).pathname;
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*\(?\s*['"]([^'"]+)['"]/g;

/** Every module reachable from `entry` (relative imports followed), with its bare imports. */
function reach(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    const bare: string[] = [];
    seen.set(file, bare);
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2]!;
      if (!specifier.startsWith('.')) {
        bare.push(specifier);
        continue;
      }
      const target = join(dirname(file), specifier).replace(/\.js$/, '.ts');
      if (existsSync(target)) queue.push(target);
      else if (existsSync(join(target, 'index.ts'))) queue.push(join(target, 'index.ts'));
    }
  }
  return seen;
}

/** The source file of each export of package.json (`./dist/x/y.js` -> `src/x/y.ts`). */
function entries(): [string, string][] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, { import: string }>;
    bin: Record<string, string>;
  };
  return [
    ...Object.entries(pkg.exports).map(([name, e]) => [name, e.import] as const),
    ...Object.entries(pkg.bin),
  ]
    .map(
      ([name, path]) =>
        [name, join(ROOT, path.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'))] as [
          string,
          string,
        ],
    )
    .filter(([, source]) => existsSync(source));
}

describe('OpenTelemetry is optional', () => {
  it('no entry but leasehold/opentelemetry imports @opentelemetry/*, by value or type', () => {
    const checked = entries().filter(([name]) => name !== './opentelemetry');
    assert.ok(
      checked.some(([name]) => name === '.'),
      'the main entry is checked',
    );
    assert.ok(
      checked.some(([name]) => name === './server'),
      'the service is checked',
    );
    for (const [name, source] of checked) {
      const graph = reach(source);
      if (name === '.')
        assert.ok(graph.size > 50, `the walk follows imports (${graph.size} files)`);
      for (const [file, bare] of graph) {
        const otel = bare.filter((s) => s.startsWith('@opentelemetry/'));
        assert.deepEqual(
          otel,
          [],
          `${name} reaches ${relative(ROOT, file)}, which imports ${otel.join(', ')}`,
        );
      }
    }
  });

  it('the walk sees what leasehold/opentelemetry imports (the check can fail)', () => {
    const [, source] = entries().find(([name]) => name === './opentelemetry')!;
    const bare = [...reach(source).values()].flat();
    assert.ok(bare.includes('@opentelemetry/api'));
  });
});
