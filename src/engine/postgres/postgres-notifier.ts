/**
 * LISTEN/NOTIFY for one engine: a single dedicated connection (not from the pool, so it never
 * starves queries) listens on the schema's channel and fans notifications out by topic.
 *
 * States: idle (no subscriber yet) -> connecting -> listening -> (connection lost) ->
 * reconnecting with jittered backoff -> listening, and then every subscriber's `onReconnect`
 * runs so it can catch up on what it missed. `close()` is final.
 */
import pg from 'pg';
import { backoffDelay } from '../../core/backoff.js';
import type { Clock, Timer } from '../../core/clock.js';
import {
  decodeNotification,
  encodeNotification,
  type NotificationHandler,
  type NotificationOperations,
  type NotifyListenParams,
  type NotifySendParams,
  type Subscription,
  validateTopic,
} from '../notifications.js';
import type { PgContext } from './context.js';
import { mapPgError } from './pg-errors.js';

const RECONNECT_BACKOFF = { baseMs: 100, capMs: 5_000 };

export class PostgresNotifier implements NotificationOperations {
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private reconnectTimer: Timer | undefined;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly ctx: PgContext,
    private readonly clientConfig: pg.ClientConfig,
    private readonly clock: Clock,
  ) {}

  async notifyListen(p: NotifyListenParams): Promise<Subscription> {
    validateTopic(p.topic);
    this.ctx.assertOpen();
    let set = this.handlers.get(p.topic);
    if (!set) this.handlers.set(p.topic, (set = new Set()));
    const handler: NotificationHandler = { onNotify: p.onNotify, onReconnect: p.onReconnect };
    set.add(handler);
    try {
      await this.ensureListening();
    } catch (error) {
      // Not listening yet is not fatal: a reconnect is scheduled and the caller polls anyway.
      this.scheduleReconnect();
      if (this.failures <= 1) throw mapPgError(error, 'NotifyListen');
    }
    return {
      unsubscribe: async () => {
        set.delete(handler);
        if (set.size === 0) this.handlers.delete(p.topic);
        if (this.handlers.size === 0) await this.disconnect();
      },
    };
  }

  async notifySend(p: NotifySendParams): Promise<void> {
    validateTopic(p.topic);
    await this.ctx.query(
      'NotifySend',
      'SELECT pg_notify($1, $2)',
      [this.ctx.notifyChannel, encodeNotification(p.topic, p.payload)],
      p.tx,
    );
  }

  /** True while the listener connection is up and listening. */
  get listening(): boolean {
    return this.client !== undefined && this.connecting === undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    await this.disconnect();
  }

  private ensureListening(): Promise<void> {
    if (this.client && !this.connecting) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ ...this.clientConfig, application_name: 'leasehold-listener' });
    const lost = (): void => this.onConnectionLost(client);
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (message.channel !== this.ctx.notifyChannel) return;
      const { topic, payload } = decodeNotification(message.payload ?? '');
      for (const handler of this.handlers.get(topic) ?? []) safely(() => handler.onNotify(payload));
    });
    try {
      await client.connect();
      // The channel is derived from the validated schema name; quoting keeps it one identifier.
      await client.query(`LISTEN "${this.ctx.notifyChannel}"`);
    } catch (error) {
      client.removeAllListeners();
      client.on('error', () => {});
      await client.end().catch(() => {});
      this.failures++;
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    const wasReconnect = this.failures > 0 || this.client !== undefined;
    this.client = client;
    this.failures = 0;
    if (wasReconnect) this.catchUpAll();
  }

  private onConnectionLost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners();
    client.on('error', () => {});
    if (!this.closed && this.handlers.size > 0) {
      this.failures = Math.max(this.failures, 1);
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const delay = Math.max(50, backoffDelay(RECONNECT_BACKOFF, this.failures));
    this.reconnectTimer = this.clock.setTimer(delay, () => {
      this.reconnectTimer = undefined;
      if (this.closed || this.handlers.size === 0) return;
      this.ensureListening().catch(() => this.scheduleReconnect());
    });
  }

  private catchUpAll(): void {
    for (const set of this.handlers.values())
      for (const handler of set) safely(() => handler.onReconnect?.());
  }

  private async disconnect(): Promise<void> {
    this.reconnectTimer?.cancel();
    this.reconnectTimer = undefined;
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners();
      client.on('error', () => {});
      await client.end().catch(() => {});
    }
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // a subscriber's bug must not stop the fan-out to the others
  }
}
