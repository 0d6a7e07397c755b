// The benchmark's HTTP load generator against a real node:http server: answers split across
// packets, multi-byte bodies, keep-alive reuse, and the answers it must refuse rather than
// misread (no Content-Length, a closed connection).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HttpLoadConnection } from '../../bench/lib/http-load.js';

let server: Server;
let base: string;
const connectionsSeen = new Set<unknown>();

before(async () => {
  server = createServer((req, res) => {
    connectionsSeen.add(req.socket);
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/chunked') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"a":');
        res.end('1}');
        return;
      }
      if (req.url === '/close') {
        req.socket.destroy();
        return;
      }
      const answer = JSON.stringify({ method: req.method, url: req.url, echo: body });
      const bytes = Buffer.from(answer, 'utf8');
      res.writeHead(req.url === '/missing' ? 404 : 201, {
        'content-type': 'application/json',
        'content-length': bytes.length,
      });
      if (req.url !== '/slow') {
        res.end(bytes);
        return;
      }
      // Head and body in separate packets, the body itself split mid-character.
      res.flushHeaders();
      setTimeout(() => res.write(bytes.subarray(0, 3)), 5);
      setTimeout(() => res.end(bytes.subarray(3)), 10);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the benchmark HTTP load generator', () => {
  it('sends JSON and reads the answer, status and body, over one kept-alive connection', async () => {
    const connection = await HttpLoadConnection.open(base);
    connectionsSeen.clear();
    for (const [method, path] of [
      ['POST', '/a'],
      ['PUT', '/b'],
      ['DELETE', '/c'],
    ] as const) {
      const answer = await connection.request(method, path, { word: 'žluťoučký kůň' });
      assert.equal(answer.status, 201);
      assert.deepEqual(JSON.parse(answer.body), {
        method,
        url: path,
        echo: JSON.stringify({ word: 'žluťoučký kůň' }),
      });
    }
    const missing = await connection.request('GET', '/missing');
    assert.equal(missing.status, 404);
    assert.equal(connectionsSeen.size, 1, 'every request went over the same connection');
    connection.close();
  });

  it('puts together an answer that arrives in pieces, split inside a multi-byte character', async () => {
    const connection = await HttpLoadConnection.open(base);
    const answer = await connection.request('POST', '/slow', { word: 'ř' });
    assert.equal(JSON.parse(answer.body).echo, '{"word":"ř"}');
    connection.close();
  });

  it('refuses an answer without a Content-Length, and a second request in flight', async () => {
    const connection = await HttpLoadConnection.open(base);
    const first = connection.request('GET', '/chunked');
    await assert.rejects(connection.request('GET', '/a'), /one request at a time/);
    await assert.rejects(first, /without a status line or Content-Length/);
    connection.close();
  });

  it('fails the request in flight when the server closes the connection, and every one after', async () => {
    const connection = await HttpLoadConnection.open(base);
    await assert.rejects(connection.request('GET', '/close'), /closed the connection/);
    await assert.rejects(connection.request('GET', '/a'), /closed the connection/);
    connection.close();
  });
});
