/**
 * Answers to requests Node's HTTP parser refuses before Fastify sees them (a header section
 * over 16 KiB, a malformed request line, a slow client), in the service's error shape: the
 * fuzz test over a real socket found Fastify's own `{"error":"Bad Request",…}` there. The
 * connection is closed after the answer, as Node does.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorCode } from '../core/errors.js';
import { errorBody } from './http-errors.js';
import { SECURITY_HEADERS } from './security-headers.js';

const ANSWERS: Record<string, { status: number; code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'payload_too_large',
    message: 'the request headers are too large',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'timeout',
    message: 'the request was not received in time',
  },
};

const MALFORMED = {
  status: 400,
  code: 'invalid_argument',
  message: 'malformed HTTP request',
} as const;

export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, code, message } = ANSWERS[error.code ?? ''] ?? MALFORMED;
  const json = JSON.stringify(errorBody(code, message));
  // An answer to HEAD has no body, or the client reads it as the start of the next answer.
  const { rawPacket } = error as { rawPacket?: unknown };
  const isHead = Buffer.isBuffer(rawPacket) && rawPacket.toString('latin1', 0, 5) === 'HEAD ';
  const body = isHead ? '' : json;
  const headers = Object.entries(SECURITY_HEADERS)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n${headers}\r\n${body}`,
    );
  socket.destroy();
}
