/**
 * Span and metric attribute names (decision 0260): OpenTelemetry's messaging semantic
 * conventions where they fit, `leasehold.*` for what is leasehold's own. Spelled out here rather
 * than imported from `@opentelemetry/semantic-conventions`, which would be one more peer for a
 * dozen strings (the messaging ones are still "incubating" there, outside its stable entry).
 */
export const MESSAGING_SYSTEM = 'messaging.system';
export const MESSAGING_DESTINATION = 'messaging.destination.name';
export const MESSAGING_OPERATION_TYPE = 'messaging.operation.type';
export const MESSAGING_OPERATION_NAME = 'messaging.operation.name';
export const MESSAGING_MESSAGE_ID = 'messaging.message.id';
export const MESSAGING_BATCH_COUNT = 'messaging.batch.message_count';
export const MESSAGING_CONSUMER_GROUP = 'messaging.consumer.group.name';

export const JOB_TYPE = 'leasehold.job.type';
export const JOB_ATTEMPT = 'leasehold.job.attempt';
export const JOB_CREATED = 'leasehold.job.created';
/** The step name of a `ctx.sleep` that ended the attempt. */
export const JOB_SLEPT = 'leasehold.job.slept';
export const TOKEN = 'leasehold.token';
export const LEASE_RESOURCE = 'leasehold.lease.resource';
export const LEASE_HOLDER = 'leasehold.lease.holder';
export const LEASE_RESULT = 'leasehold.lease.result';
export const LEASE_BATCH_SIZE = 'leasehold.batch.size';
export const ELECTION_NAME = 'leasehold.election.name';
export const ELECTION_INSTANCE = 'leasehold.election.instance';
export const ELECTION_REASON = 'leasehold.election.revoked_reason';
export const WORKER_ID = 'leasehold.worker.id';

export const HTTP_METHOD = 'http.request.method';
export const HTTP_ROUTE = 'http.route';
export const HTTP_STATUS = 'http.response.status_code';
export const URL_PATH = 'url.path';

/** `messaging.system` of every span and metric. */
export const SYSTEM = 'leasehold';
