/**
 * The notification family: wake-up hints between processes (LISTEN/NOTIFY on PostgreSQL, an
 * in-process fan-out in memory). Notifications are hints, never the source of truth: they can
 * be dropped (a reconnect, a full queue), so every consumer also polls, and `onReconnect` tells
 * it to catch up on whatever it may have missed while the listener was down.
 *
 * One listener connection per engine carries every topic: the channel is per schema and the
 * topic travels in the payload as `topic|payload`, which SQL can build with `||` inside the very
 * statement that made the change (one NOTIFY per statement, never one per row).
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { CallerTransaction } from './types.js';

export interface NotificationHandler {
  /** A notification on the topic arrived; `payload` is '' when none was sent. */
  onNotify(payload: string): void;
  /** The listener (re)connected after an outage: notifications may have been lost, catch up. */
  onReconnect?(): void;
}

export interface Subscription {
  unsubscribe(): Promise<void>;
}

export interface NotifyListenParams extends NotificationHandler {
  /** A short name without `|`, such as `jobs` or `locks`. */
  topic: string;
}

export interface NotifySendParams {
  topic: string;
  payload?: string;
  /** Send inside the caller's transaction: delivered only if it commits. */
  tx?: CallerTransaction;
}

export interface NotificationOperations {
  /** Subscribes; resolves once the listener is listening (so a later send is seen). */
  notifyListen(params: NotifyListenParams): Promise<Subscription>;
  notifySend(params: NotifySendParams): Promise<void>;
}

/** `topic|payload`: the wire form, shared by both engines and by SQL that notifies inline. */
export function encodeNotification(topic: string, payload = ''): string {
  return `${topic}|${payload}`;
}

export function decodeNotification(raw: string): { topic: string; payload: string } {
  const bar = raw.indexOf('|');
  return bar < 0
    ? { topic: raw, payload: '' }
    : { topic: raw.slice(0, bar), payload: raw.slice(bar + 1) };
}

export function validateTopic(topic: string): void {
  if (typeof topic !== 'string' || topic.length === 0 || topic.length > 64 || topic.includes('|'))
    throw new InvalidArgumentError('topic', 'must be 1 to 64 characters without "|"');
}
