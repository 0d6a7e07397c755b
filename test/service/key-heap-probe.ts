// Run by security.test.ts in a child process with --expose-gc: configures API keys the way
// `leasehold serve` does (from LEASEHOLD_API_KEYS), collects garbage, writes a heap snapshot and
// says whether the plain key is anywhere in it. With `keep`, it holds the parsed configuration
// on purpose, to show that the search finds a key that is kept.
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { hashApiKeys, parseApiKeys } from '../../src/service/auth.js';

// The key arrives hex-encoded and stays bytes (off the JS heap): as a string it would be in the
// snapshot for that reason alone.
const needle = Buffer.from(process.argv[2] ?? '', 'hex');
const keep = process.argv[3] === 'keep';
const parsed = parseApiKeys(process.env.LEASEHOLD_API_KEYS);
const kept = keep ? parsed : hashApiKeys(parsed);
delete process.env.LEASEHOLD_API_KEYS;
parsed.length = keep ? parsed.length : 0;
(globalThis as { gc?: () => void }).gc?.();
const file = writeHeapSnapshot(join(tmpdir(), `leasehold-keys-${process.pid}.heapsnapshot`));
const found = readFileSync(file).includes(needle);
rmSync(file);
console.log(JSON.stringify({ found, keys: kept.length }));
