import { useState } from 'preact/hooks';
import { api } from '../api.js';
import type { GeneratorView } from '../types.js';

export function Generator({
  generator,
  onError,
}: {
  generator: GeneratorView;
  onError: (message: string) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [shown, setShown] = useState<GeneratorView | null>(null);
  // A click answers at once with the new status; the next snapshot confirms it.
  const current =
    shown && shown.changedAt !== null && shown.changedAt >= (generator.changedAt ?? '')
      ? shown
      : generator;
  const act = async (action: 'start' | 'stop'): Promise<void> => {
    setBusy(true);
    try {
      setShown(await api<GeneratorView>('POST', `/api/generator/${action}`));
    } catch (error) {
      onError((error as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const running = current.state === 'started';
  return (
    <section id="generator" aria-labelledby="generator-title">
      <h2 id="generator-title">Generator</h2>
      <div class="generator">
        <p>
          <span class={`pill ${running ? 'active' : 'released'}`} data-testid="generator-state">
            {current.state}
          </span>{' '}
          {running ? (
            current.runningOn ? (
              <>
                on <span class="mono">{current.runningOn}</span> (token {current.token})
              </>
            ) : (
              'waiting for an instance to take the lease'
            )
          ) : (
            'no tasks are being generated'
          )}
        </p>
        <button
          type="button"
          class="primary"
          disabled={busy}
          onClick={() => void act(running ? 'stop' : 'start')}
        >
          {running ? 'Stop generator' : 'Start generator'}
        </button>
        {current.changedBy ? <p class="muted">Last changed by {current.changedBy}</p> : null}
      </div>
    </section>
  );
}
