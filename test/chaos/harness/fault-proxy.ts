/**
 * The TCP proxy every child talks to PostgreSQL through, one listening port per child so that a
 * fault can cut one process off while the others carry on. Per child it can pass traffic, hold it
 * (blackhole: nothing is delivered until the fault ends, as in a partition that heals), delay
 * every chunk (latency), or reset every connection at once. Chunks are delivered in order in
 * every mode, as TCP would.
 *
 * `silent` is the blackhole of a real partition, closes included: a side that closes its socket
 * while silent is not seen closing by the other side until the fault heals, and then only after
 * everything it sent before (a statement a client gave up on still reaches the server, as TCP
 * retransmission would deliver it). In `blackhole` a close goes through at once and what was held
 * is dropped.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

type Mode =
  { kind: 'pass' } | { kind: 'blackhole' } | { kind: 'silent' } | { kind: 'latency'; ms: number };

interface Pipe {
  client: Socket;
  upstream: Socket;
}

interface Network {
  server: Server;
  port: number;
  mode: Mode;
  pipes: Set<Pipe>;
  /** Re-delivers what was held back, once the mode changes. */
  pumps: Set<() => void>;
  /** Closes that happened while silent: carried out once the held data is delivered. */
  heldCloses: Set<() => void>;
}

export class FaultProxy {
  private readonly networks = new Map<string, Network>();
  /** Local ports of every upstream connection ever made: how the server names their sessions. */
  private readonly usedPorts = new Set<number>();

  constructor(
    private readonly upstreamHost: string,
    private readonly upstreamPort: number,
  ) {}

  /** The port `proc` connects to; the same one for all its incarnations. */
  async portFor(proc: string): Promise<number> {
    const existing = this.networks.get(proc);
    if (existing) return existing.port;
    const network: Network = {
      server: createServer((client) => this.accept(network, client)),
      port: 0,
      mode: { kind: 'pass' },
      pipes: new Set(),
      pumps: new Set(),
      heldCloses: new Set(),
    };
    await new Promise<void>((resolve) => network.server.listen(0, '127.0.0.1', resolve));
    const address = network.server.address();
    network.port = typeof address === 'object' && address ? address.port : 0;
    this.networks.set(proc, network);
    return network.port;
  }

  setMode(proc: string, mode: Mode): void {
    const network = this.networks.get(proc);
    if (!network) return;
    network.mode = mode;
    for (const pump of network.pumps) pump();
    if (mode.kind === 'silent') return;
    const closes = [...network.heldCloses];
    network.heldCloses.clear();
    for (const close of closes) close();
  }

  /** Destroys every connection of `proc` at once (both sides see a reset). */
  reset(proc: string): number {
    const network = this.networks.get(proc);
    if (!network) return 0;
    const count = network.pipes.size;
    for (const pipe of network.pipes) {
      pipe.client.resetAndDestroy();
      pipe.upstream.resetAndDestroy();
    }
    return count;
  }

  /** Local ports of the live upstream connections of `proc` (the server's client_port). */
  upstreamPorts(proc: string): number[] {
    const network = this.networks.get(proc);
    return network ? [...network.pipes].map((p) => p.upstream.localPort ?? 0) : [];
  }

  everUsedPorts(): number[] {
    return [...this.usedPorts];
  }

  openConnections(): number {
    let count = 0;
    for (const network of this.networks.values()) count += network.pipes.size;
    return count;
  }

  async close(): Promise<void> {
    for (const network of this.networks.values()) {
      for (const pipe of network.pipes) {
        pipe.client.destroy();
        pipe.upstream.destroy();
      }
      await new Promise((resolve) => network.server.close(resolve));
    }
  }

  private accept(network: Network, client: Socket): void {
    const upstream = connect(this.upstreamPort, this.upstreamHost);
    const pipe: Pipe = { client, upstream };
    network.pipes.add(pipe);
    upstream.once('connect', () => {
      if (upstream.localPort) this.usedPorts.add(upstream.localPort);
    });
    const pumps = [
      this.forward(network, client, upstream),
      this.forward(network, upstream, client),
    ];
    for (const pump of pumps) network.pumps.add(pump);
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      network.pipes.delete(pipe);
      for (const pump of pumps) network.pumps.delete(pump);
      client.destroy();
      upstream.destroy();
    };
    // While silent, the far side must not see the close: it ends (after the data held for it,
    // which the pumps write first) only when the fault heals.
    let closeHeld = false;
    const closed = (socket: Socket): void => {
      if (network.mode.kind !== 'silent') return end();
      if (closeHeld) return;
      closeHeld = true;
      const other = socket === client ? upstream : client;
      network.heldCloses.add(() => {
        network.pipes.delete(pipe);
        for (const pump of pumps) network.pumps.delete(pump);
        ended = true;
        if (!other.destroyed) other.end(() => other.destroy());
      });
    };
    for (const socket of [client, upstream]) {
      socket.on('error', () => closed(socket));
      socket.on('close', () => closed(socket));
    }
  }

  /** Moves chunks from `from` to `to` under the network's current mode; returns its pump. */
  private forward(network: Network, from: Socket, to: Socket): () => void {
    const queue: { chunk: Buffer; readyAt: number }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const pump = (): void => {
      clearTimeout(timer);
      timer = undefined;
      if (network.mode.kind === 'blackhole' || network.mode.kind === 'silent') return;
      while (queue.length > 0 && queue[0]!.readyAt <= Date.now()) {
        if (!to.destroyed) to.write(queue.shift()!.chunk);
        else queue.shift();
      }
      if (queue.length > 0) timer = setTimeout(pump, queue[0]!.readyAt - Date.now());
    };
    from.on('data', (chunk: Buffer) => {
      const delay = network.mode.kind === 'latency' ? network.mode.ms : 0;
      queue.push({ chunk, readyAt: Date.now() + delay });
      pump();
    });
    from.on('close', () => clearTimeout(timer));
    return pump;
  }
}
