import type {
  NotificationHandler,
  NotificationOperations,
  NotifyListenParams,
  NotifySendParams,
  Subscription,
} from '../notifications.js';
import { validateTopic } from '../notifications.js';

/**
 * In-process notifications. Delivery is asynchronous (a microtask later), as it is on
 * PostgreSQL, so no caller can come to rely on a handler running inside `notifySend`.
 * There is no connection to lose, so `onReconnect` never fires.
 */
export class MemoryNotifier implements NotificationOperations {
  private readonly handlers = new Map<string, Set<NotificationHandler>>();

  async notifyListen(p: NotifyListenParams): Promise<Subscription> {
    validateTopic(p.topic);
    let set = this.handlers.get(p.topic);
    if (!set) this.handlers.set(p.topic, (set = new Set()));
    const handler: NotificationHandler = { onNotify: p.onNotify, onReconnect: p.onReconnect };
    set.add(handler);
    return {
      unsubscribe: async () => {
        set.delete(handler);
      },
    };
  }

  async notifySend(p: NotifySendParams): Promise<void> {
    validateTopic(p.topic);
    this.publish(p.topic, p.payload ?? '');
  }

  /** For the other memory families: notify as the SQL of the PostgreSQL engine does inline. */
  publish(topic: string, payload = ''): void {
    const set = this.handlers.get(topic);
    if (!set || set.size === 0) return;
    queueMicrotask(() => {
      for (const handler of [...set]) {
        try {
          handler.onNotify(payload);
        } catch {
          // isolated, as on PostgreSQL
        }
      }
    });
  }
}
