/**
 * Timing in the multi-process tests. Several test runs may share a loaded two-core machine, where
 * a process can wait seconds to be scheduled. So precise claims are made as orderings of events
 * (a new term begins only after the old holder's trust deadline; a drain ends before the job it
 * handed back could have finished), and the remaining bounds are liveness bounds with room for a
 * busy machine, measured on the test's own clock: they tell "at the expiry" from "never" or
 * "only after something else happened", not fast from slow.
 */

/** Room for a loaded machine to schedule the processes involved, on top of a designed delay. */
export const SCHEDULING_SLACK_MS = 10_000;

/** How long to wait for an event that should come soon before calling it missing. */
export const EVENT_TIMEOUT_MS = 60_000;
