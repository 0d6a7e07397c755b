// The clients' HTTP door against a real node:http server: requests share kept-alive
// connections, answers and error bodies come back as the library's values and errors, and
// whatever stops an answer (timeout, abort, a cut-off body, no server) is `unavailable`.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HttpClient } from '../../src/client/http.js';
import { InvalidArgumentError, LeaseholdError, UnavailableError } from '../../src/core/errors.js';
import { waitFor } from '../support/wait.js';

let server: Server;
let base: string;
const sockets = new Set<Socket>();
const seen: { method?: string; url?: string; auth?: string; body: string }[] = [];

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
  });
}

before(async () => {
  server = createServer(async (req, res) => {
    sockets.add(req.socket);
    const body = await readBody(req);
    seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, body });
    const json = (status: number, value: unknown): void => {
      const text = JSON.stringify(value);
      res.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    };
    if (req.url?.endsWith('/held'))
      json(409, { error: { code: 'lease_held', message: 'held by b', details: { holder: 'b' } } });
    else if (req.url?.endsWith('/busy'))
      json(503, { error: { code: 'unavailable', message: 'no database' } });
    else if (req.url?.endsWith('/slow')) setTimeout(() => json(200, {}), 2_000);
    else if (req.url?.endsWith('/cut')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 });
      res.write('{"half":');
      setTimeout(() => req.socket.destroy(), 20);
    } else if (req.url?.endsWith('/empty')) {
      res.writeHead(204);
      res.end();
    } else json(200, { echo: body === '' ? null : JSON.parse(body), word: 'kůň' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('HttpClient', () => {
  it('sends JSON with the API key and reads JSON, over one kept-alive connection', async () => {
    const client = new HttpClient({ baseUrl: `${base}/prefix/`, apiKey: 'k1' });
    sockets.clear();
    seen.length = 0;
    for (let i = 0; i < 5; i++) {
      const answer = await client.request<{ echo: unknown; word: string }>('PUT', '/x', { i });
      assert.deepEqual(answer, { status: 200, body: { echo: { i }, word: 'kůň' } });
    }
    assert.deepEqual(await client.request('GET', '/empty'), { status: 204, body: undefined });
    assert.equal(sockets.size, 1, 'one connection carried every request');
    assert.deepEqual(
      seen.map((s) => [s.method, s.url, s.auth]),
      [
        ...Array.from({ length: 5 }, () => ['PUT', '/prefix/x', 'Bearer k1']),
        ['GET', '/prefix/empty', 'Bearer k1'],
      ],
    );
  });

  it("turns an error body into the library's error with the server's code and details", async () => {
    const client = new HttpClient({ baseUrl: base });
    const error = await client.request('POST', '/held', {}).catch((e: unknown) => e);
    assert.ok(error instanceof LeaseholdError);
    assert.equal(error.code, 'lease_held');
    assert.equal((error.details as { holder?: string }).holder, 'b');
    await assert.rejects(client.request('GET', '/busy'), UnavailableError);
  });

  it('answers unavailable on a timeout, an abort, a cut-off body and a closed port', async () => {
    const timedOut = new HttpClient({ baseUrl: base, timeoutMs: 50 });
    await assert.rejects(timedOut.request('GET', '/slow'), UnavailableError);
    const client = new HttpClient({ baseUrl: base });
    const controller = new AbortController();
    seen.length = 0;
    const aborted = client.request('GET', '/slow', undefined, controller.signal);
    // Aborted while the server holds the request, not before it was sent.
    await waitFor('the slow request at the server', () => seen.length === 1);
    controller.abort();
    await assert.rejects(aborted, UnavailableError);
    await assert.rejects(client.request('GET', '/cut'), UnavailableError);
    const nobody = createServer();
    await new Promise<void>((resolve) => nobody.listen(0, '127.0.0.1', resolve));
    const port = (nobody.address() as AddressInfo).port;
    await new Promise((resolve) => nobody.close(resolve));
    await assert.rejects(
      new HttpClient({ baseUrl: `http://127.0.0.1:${port}` }).request('GET', '/x'),
      UnavailableError,
    );
  });

  it('refuses a base URL that is not http or https', () => {
    assert.throws(() => new HttpClient({ baseUrl: 'not a url' }), InvalidArgumentError);
    assert.throws(() => new HttpClient({ baseUrl: 'ftp://host/' }), InvalidArgumentError);
  });
});
