/**
 * Builds the dashboard from web/ into web/dist/ (index.html, assets/app.js, assets/app.css):
 * one minified bundle, no CDN, so the page works offline. Runs before `npm start`, `npm test`
 * and `npm run build`; takes well under a second.
 */
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const web = join(root, 'web');
const out = join(web, 'dist');

await mkdir(join(out, 'assets'), { recursive: true });
const result = await build({
  entryPoints: { app: join(web, 'src/main.tsx') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: join(out, 'assets'),
  loader: { '.css': 'css' },
  metafile: true,
  logLevel: 'warning',
});
await build({
  entryPoints: { app: join(web, 'src/styles.css') },
  bundle: true,
  minify: true,
  outdir: join(out, 'assets'),
  logLevel: 'warning',
});
await copyFile(join(web, 'index.html'), join(out, 'index.html'));
const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
console.log(`dashboard built into web/dist (${(bytes / 1024).toFixed(1)} kB of JS)`);
