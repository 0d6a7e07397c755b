/**
 * The statements of the term history (migration 19, decision 0267). Terms are recorded by the
 * trigger inside the acquire; these read, mark and prune them, never on the hot path.
 */
export interface LeaseTermQueries {
  LeaseTermList: string;
  LeaseTermPrune: string;
  LeaseTermRecording: string;
  LeaseTermRecordingOn: string;
  LeaseTermRecordingOff: string;
  LeaseTermSupersede: string;
}

export interface RecordedTermRow {
  holder: string;
  token: string;
  started_at: Date;
  ended_at: Date;
  ended: string;
}

export function leaseTermQueries(s: string): LeaseTermQueries {
  return {
    // $1 kind, $2 resource, $3 limit
    LeaseTermList: `SELECT holder, token, started_at, ended_at, ended FROM ${s}.lease_terms
      WHERE kind = $1 AND resource = $2 ORDER BY token DESC LIMIT $3`,

    // $1 older than (ms), $2 recorded terms kept per resource, $3 limit, $4 now
    LeaseTermPrune: `WITH clock AS (SELECT coalesce($4::timestamptz, now()) AS now),
      doomed AS (
        SELECT t.kind, t.resource, t.token FROM ${s}.lease_terms t, clock
        WHERE t.ended_at < clock.now - $1::bigint * interval '1 millisecond'
           OR t.token <= (SELECT n.token FROM ${s}.lease_terms n
                          WHERE n.kind = t.kind AND n.resource = t.resource
                          ORDER BY n.token DESC OFFSET $2 LIMIT 1)
        LIMIT $3),
      deleted AS (
        DELETE FROM ${s}.lease_terms d USING doomed
        WHERE d.kind = doomed.kind AND d.resource = doomed.resource AND d.token = doomed.token
        RETURNING 1)
      SELECT count(*)::integer AS pruned FROM deleted`,

    // The switch is the trigger's own state (decision 0267): nothing to read on the hot path.
    LeaseTermRecording: `SELECT t.tgenabled <> 'D' AS enabled FROM pg_trigger t
      WHERE t.tgrelid = '${s}.leases'::regclass AND t.tgname = 'leases_record_term'`,
    LeaseTermRecordingOn: `ALTER TABLE ${s}.leases ENABLE TRIGGER leases_record_term`,
    LeaseTermRecordingOff: `ALTER TABLE ${s}.leases DISABLE TRIGGER leases_record_term`,

    // A renew refused after another holder's term followed the renewer's expired one: that
    // term is marked `superseded`. The term after it is the next recorded one or, if none, the
    // row (in `leases` or `lease_locks`, by kind).
    // $1 resources, $2 holders, $3 tokens (one element per refused renew), $4 kind
    LeaseTermSupersede: `UPDATE ${s}.lease_terms AS t SET ended = 'superseded'
      FROM unnest($1::text[], $2::text[], $3::bigint[]) AS r(resource, holder, token)
      WHERE t.kind = $4::text AND t.resource = r.resource AND t.token = r.token AND t.holder = r.holder
        AND t.ended = 'expired'
        AND (SELECT n.holder FROM (
               SELECT x.holder, x.token FROM ${s}.lease_terms x
               WHERE x.kind = $4::text AND x.resource = r.resource AND x.token > r.token
               UNION ALL
               SELECT l.holder, l.token FROM ${s}.leases l
               WHERE $4::text = 'lease' AND l.resource = r.resource AND l.token > r.token
               UNION ALL
               SELECT k.holder, k.token FROM ${s}.lease_locks k
               WHERE $4::text = 'lock' AND k.name = r.resource AND k.token > r.token
             ) n ORDER BY n.token LIMIT 1) <> r.holder`,
  };
}
