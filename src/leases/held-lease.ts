// The held lease is engine-agnostic logic on an injected clock, shared with the HTTP client,
// so it lives in core/; the lease layer re-exports it where its users look for it.
export * from '../core/held-lease.js';
