// Trust timing lives in core/ (shared with the HTTP client); re-exported for the lease layer.
export * from '../core/trust.js';
