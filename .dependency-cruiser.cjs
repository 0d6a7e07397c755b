/**
 * The import-cycle check of `npm run lint` (eslint.config.js holds the layer rules). A cycle is
 * refused whether its imports carry values or only types: a type-only cycle still ties two
 * modules' designs together, and it becomes a value cycle with one careless edit.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles in src/, type-only imports included (docs/decisions/0232).',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // Type-only imports are dependencies too: see them before TypeScript erases them.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
