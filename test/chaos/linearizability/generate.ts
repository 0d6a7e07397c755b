/**
 * Histories for the checker's own tests: a correct sequential execution of leases on a simulated
 * database clock, each operation given a random interval around its moment, some outcomes hidden.
 */
import { seededRandom } from '../random.js';
import type { LeaseInput, LeaseOperation, LeaseOutput } from './lease-model.js';

export interface GenerateOptions {
  seed: number;
  operations: number;
  resources: number;
  clientsPerResource: number;
  /** Each interval reaches up to this many operation slots either side of its moment. */
  spread: number;
  /** Share of operations whose outcome is hidden (half of those did not take effect). */
  unknownShare: number;
}

interface Truth {
  holder: string | null;
  token: number;
  expiresAt: number;
  maxToken: number;
}

export function generateLeaseHistory(o: GenerateOptions): LeaseOperation[] {
  const random = seededRandom(o.seed);
  const truth = new Map<string, Truth>();
  const tokens = new Map<string, number>(); // the last token each client got, per resource
  const ops: LeaseOperation[] = [];
  for (let k = 0; k < o.operations; k++) {
    const resource = `r${random.int(0, o.resources - 1)}`;
    const holder = `c${random.int(0, o.clientsPerResource - 1)}`;
    const now = k * 10;
    const s = truth.get(resource) ?? { holder: null, token: 0, expiresAt: 0, maxToken: 0 };
    const live = s.holder !== null && now < s.expiresAt;
    const own = tokens.get(`${resource}/${holder}`) ?? 0;
    const ttl = random.int(20, 120);
    const kind = random.weighted({ acquire: 4, renew: 3, release: 1, read: 2 });
    let input: LeaseInput;
    let output: LeaseOutput;
    const hide = random.chance(o.unknownShare);
    const takesEffect = !hide || random.chance(0.5);
    let next: Truth = s;
    if (kind === 'acquire') {
      input = { kind, resource, holder, ttl };
      if (live && s.holder !== holder) output = { kind: 'busy', dbNow: now };
      else {
        const token = live ? s.token : s.maxToken + random.int(1, 2);
        output = { kind: 'acquired', token, expiresAt: now + ttl, dbNow: now };
        next = { holder, token, expiresAt: now + ttl, maxToken: Math.max(s.maxToken, token) };
        tokens.set(`${resource}/${holder}`, token);
      }
    } else if (kind === 'renew' || kind === 'release') {
      const mine = live && s.holder === holder && s.token === own;
      if (kind === 'renew') {
        input = { kind, resource, holder, token: own, ttl };
        output = mine
          ? { kind: 'renewed', expiresAt: now + ttl, dbNow: now }
          : { kind: 'lost', dbNow: now };
        if (mine) next = { ...s, expiresAt: now + ttl };
      } else {
        input = { kind, resource, holder, token: own };
        output = mine ? { kind: 'released', dbNow: now } : { kind: 'lost', dbNow: now };
        if (mine) next = { ...s, holder: null };
      }
    } else {
      input = { kind: 'read', resource };
      output = live
        ? { kind: 'held', holder: s.holder!, token: s.token, dbNow: now }
        : { kind: 'none', dbNow: now };
    }
    if (takesEffect) truth.set(resource, next);
    else if (kind === 'acquire' && output.kind === 'acquired' && !live)
      tokens.delete(`${resource}/${holder}`);
    const call = k - random.between(0, o.spread);
    const ret = k + random.between(0, o.spread);
    ops.push({ client: holder, call, ret, input, ...(hide ? { unknown: true } : { output }) });
  }
  return ops;
}
