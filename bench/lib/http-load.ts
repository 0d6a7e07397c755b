/**
 * The benchmark's HTTP load generator: one keep-alive HTTP/1.1 connection per caller, one
 * request in flight on each, the request written as one string and the answer read by its
 * Content-Length. It does what wrk or autocannon do for a server benchmark, and for the same
 * reason: on the two-core test machine the client, the service and PostgreSQL share the cores,
 * so every microsecond the client spends is taken from the system under test. node:http's
 * client spends about 100 µs of CPU per request there (ClientRequest, agent bookkeeping,
 * streams), this one less than half of that (decision 0211). The lease scenario measures with
 * both and prints both; the target is judged on this one.
 *
 * Deliberately small: no chunked answers (the service sends a length with every JSON answer;
 * one without is an error here), no redirects, no pipelining. A connection closed by the server
 * fails its caller's request.
 */
import { connect, type Socket } from 'node:net';

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

const HEADER_END = '\r\n\r\n';
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})/;

export class HttpLoadConnection {
  private buffer = '';
  private waiting:
    { resolve: (answer: HttpAnswer) => void; reject: (error: Error) => void } | undefined;
  private failure: Error | undefined;
  private readonly hostHeader: string;

  private constructor(
    private readonly socket: Socket,
    host: string,
    port: number,
  ) {
    this.hostHeader = `${host}:${port}`;
    socket.setNoDelay(true);
    // Latin-1 keeps one character per byte, so Content-Length (bytes) indexes the buffer; the
    // body is decoded as UTF-8 once it is whole.
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('the server closed the connection')));
  }

  /** Opens a connection to `base` (`http://host:port`). */
  static open(base: string): Promise<HttpLoadConnection> {
    const url = new URL(base);
    if (url.protocol !== 'http:')
      throw new Error(`http-load speaks plain http, not ${url.protocol}`);
    const port = Number(url.port || 80);
    return new Promise((resolve, reject) => {
      const socket = connect(port, url.hostname);
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new HttpLoadConnection(socket, url.hostname, port));
      });
    });
  }

  /** Sends one request with a JSON body and resolves with the whole answer. */
  request(method: string, path: string, body?: unknown): Promise<HttpAnswer> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.waiting) return Promise.reject(new Error('one request at a time per connection'));
    const payload = body === undefined ? '' : JSON.stringify(body);
    const head =
      `${method} ${path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n` +
      (body === undefined ? '' : 'content-type: application/json\r\n') +
      `content-length: ${Buffer.byteLength(payload)}\r\n\r\n`;
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      // One write, so one segment: head and body in the same packet, as a browser sends them.
      this.socket.write(head + payload);
    });
  }

  close(): void {
    this.failure ??= new Error('closed');
    this.socket.destroy();
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    const headerEnd = this.buffer.indexOf(HEADER_END);
    if (headerEnd < 0) return;
    const head = this.buffer.slice(0, headerEnd);
    const length = CONTENT_LENGTH.exec(head);
    const status = STATUS_LINE.exec(head);
    if (!length || !status) {
      this.fail(new Error(`an answer without a status line or Content-Length: ${head}`));
      return;
    }
    const bodyStart = headerEnd + HEADER_END.length;
    const bodyEnd = bodyStart + Number(length[1]);
    if (this.buffer.length < bodyEnd) return;
    const body = Buffer.from(this.buffer.slice(bodyStart, bodyEnd), 'latin1').toString('utf8');
    this.buffer = this.buffer.slice(bodyEnd);
    const waiting = this.waiting;
    this.waiting = undefined;
    if (!waiting) this.fail(new Error('an answer nobody asked for'));
    else waiting.resolve({ status: Number(status[1]), body });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(error);
  }
}
