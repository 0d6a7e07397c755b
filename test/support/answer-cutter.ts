/**
 * A TCP proxy in front of PostgreSQL that loses one statement's answer after the server
 * committed it: the connection that sends a statement whose bytes contain every one of the
 * armed markers is cut, both ways, once the server has said ReadyForQuery for it (so the
 * implicit transaction of that statement has committed), and nothing of its answer reaches the
 * client. The client sees a reset connection, exactly as when a network or a pooler dies
 * between the commit and the answer. It cuts once, then passes everything.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class AnswerCutter {
  private server: Server | undefined;
  private markers: string[] | undefined;
  private readonly sockets = new Set<Socket>();
  /** Resolves once a statement has been cut. */
  readonly cut: Promise<void>;
  private cutDone!: () => void;

  constructor(
    private readonly upstreamHost: string,
    private readonly upstreamPort: number,
  ) {
    this.cut = new Promise((resolve) => (this.cutDone = resolve));
  }

  /** Listens on a free local port; returns it. */
  async listen(): Promise<number> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  /** Cuts the next statement whose bytes contain all of `markers`, after it commits. */
  arm(markers: string[]): void {
    this.markers = markers;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private accept(client: Socket): void {
    const upstream = connect(this.upstreamPort, this.upstreamHost);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    let doomed = false;
    let sent = '';
    client.on('data', (chunk: Buffer) => {
      if (!doomed && this.markers) {
        // A statement's Bind may arrive in more than one chunk: look at what came since the last.
        sent += chunk.toString('latin1');
        if (this.markers.every((m) => sent.includes(m))) {
          doomed = true;
          this.markers = undefined;
        }
      }
      upstream.write(chunk);
    });
    // The server's messages, parsed (type byte, int32 length including itself) to find the
    // ReadyForQuery that ends the doomed statement.
    let pending: Buffer = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      if (!doomed) {
        sent = '';
        client.write(chunk);
        // Keep framing even while passing, so a later doomed answer is parsed from a boundary.
        pending = consumeMessages(Buffer.concat([pending, chunk]), () => {});
        return;
      }
      pending = consumeMessages(Buffer.concat([pending, chunk]), (type) => {
        if (type !== 'Z') return;
        // Committed and answered: the answer is lost with the connection.
        client.resetAndDestroy();
        upstream.destroy();
        this.cutDone();
      });
    });
  }
}

/** Calls `onMessage` for each whole message in `buffer`; returns the incomplete rest. */
function consumeMessages(buffer: Buffer, onMessage: (type: string) => void): Buffer {
  let offset = 0;
  while (buffer.length - offset >= 5) {
    const length = buffer.readInt32BE(offset + 1);
    if (buffer.length - offset < 1 + length) break;
    onMessage(String.fromCharCode(buffer[offset]!));
    offset += 1 + length;
  }
  return buffer.subarray(offset);
}
