/**
 * A small round-robin TCP load balancer for multi-replica tests: each new client connection is
 * piped to the next live backend. Backends come and go (a rolling restart) with `setBackends`;
 * a connection whose backend refuses is retried on the next one, as a real balancer's health
 * check would route around a replica that is gone.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface Balancer {
  readonly url: string;
  setBackends(ports: number[]): void;
  close(): Promise<void>;
}

export async function startBalancer(initial: number[]): Promise<Balancer> {
  let backends = [...initial];
  let next = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    const tryBackend = (attemptsLeft: number): void => {
      if (backends.length === 0 || attemptsLeft === 0) {
        client.destroy();
        return;
      }
      const port = backends[next++ % backends.length]!;
      const upstream = connect(port, '127.0.0.1');
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        client.pipe(upstream).pipe(client);
        client.resume();
        client.on('error', () => upstream.destroy());
      });
      upstream.on('error', () => {
        if (!connected) tryBackend(attemptsLeft - 1);
        else client.destroy();
      });
    };
    tryBackend(backends.length * 2);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    setBackends(ports) {
      backends = [...ports];
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
