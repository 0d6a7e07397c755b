/**
 * Each queue's settings as the Jobs and Queues sections show them: the snapshot's, or the answer
 * of a pause, resume or settings change made from this page, shown until the snapshot has caught
 * up with it (so a click shows its effect at once), and the pause/resume action itself.
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import type { QueueSettingsView, Snapshot } from './types.js';

/** A change answered less than this long ago shows before the snapshot catches up. */
const ANSWER_SHOWN_MS = 3_000;

export function useQueueSettings(snapshot: Snapshot, onError: (message: string) => void) {
  const [answers, setAnswers] = useState<
    Record<string, { settings: QueueSettingsView; at: number }>
  >({});
  const queues = [
    ...new Set([...snapshot.jobs.map((j) => j.queue), ...snapshot.queues.map((q) => q.queue)]),
  ].sort();
  const settingsOf = (queue: string): QueueSettingsView | undefined => {
    const answer = answers[queue];
    if (answer && Date.now() - answer.at < ANSWER_SHOWN_MS) return answer.settings;
    return snapshot.queues.find((q) => q.queue === queue);
  };
  const answered = (settings: QueueSettingsView): void =>
    setAnswers((current) => ({ ...current, [settings.queue]: { settings, at: Date.now() } }));
  const toggle = async (queue: string, action: 'pause' | 'resume'): Promise<void> => {
    try {
      answered(
        await api<QueueSettingsView>('POST', `/api/queues/${encodeURIComponent(queue)}/${action}`),
      );
    } catch (error) {
      onError((error as Error).message);
    }
  };
  const countOf = (queue: string, status: string): number =>
    snapshot.jobs.find((j) => j.queue === queue && j.status === status)?.count ?? 0;
  return { queues, settingsOf, answered, toggle, countOf };
}
