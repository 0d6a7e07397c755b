/**
 * One span per term an election of this process wins (decision 0260): `election term <name>`
 * starts when the term is won (`election:elected`) and ends when it is lost or given up
 * (`election:revoked`), with the token and, at the end, why. A root span: a term outlives any
 * request that might have been active when the election started. A term still held when
 * instrumentation is closed ends then, marked `leasehold.election.revoked_reason = "untraced"`.
 */
import { ROOT_CONTEXT, type Span, type Tracer } from '@opentelemetry/api';
import type { Election } from '../locks/election.js';
import { ELECTION_INSTANCE, ELECTION_NAME, ELECTION_REASON, TOKEN } from './attributes.js';

export class ElectionSpans {
  private readonly terms = new Map<Election, Span>();
  private readonly stops: (() => void)[] = [];

  constructor(private readonly tracer: Tracer) {}

  watch(election: Election): void {
    this.stops.push(
      election.events.on('election:elected', ({ name, instanceId, token }) => {
        this.terms.get(election)?.end();
        this.terms.set(
          election,
          this.tracer.startSpan(
            `election term ${name}`,
            {
              attributes: {
                [ELECTION_NAME]: name,
                [ELECTION_INSTANCE]: instanceId,
                [TOKEN]: token,
              },
            },
            ROOT_CONTEXT,
          ),
        );
      }),
      election.events.on('election:revoked', ({ reason }) => {
        const span = this.terms.get(election);
        if (!span) return;
        this.terms.delete(election);
        span.setAttribute(ELECTION_REASON, reason.message);
        span.end();
      }),
    );
  }

  close(): void {
    for (const stop of this.stops.splice(0)) stop();
    for (const span of this.terms.values()) {
      span.setAttribute(ELECTION_REASON, 'untraced');
      span.end();
    }
    this.terms.clear();
  }
}
