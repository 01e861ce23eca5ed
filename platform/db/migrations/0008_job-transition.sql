-- Up Migration

-- A job's move to its next state in one statement (platform/db/jobs-table.ts recordTransition):
-- the row locked, the queued counts it leaves (owner, key), the row written forward only, the
-- day's usage counted the first time it turns final, and the platform's queued count last: the
-- order the accept path takes its locks in, so the two never deadlock. `p_row` is the row as
-- JSON (metadata as its verbatim JSON text), `p_usage` the usage row of a final state, else null.
-- Answers 'missing' (no row: the caller writes one), 'changed' or 'unchanged'.
CREATE FUNCTION job_transition(p_row jsonb, p_usage jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r jobs;
  before record;
  leaves boolean;
  changed integer;
BEGIN
  r := jsonb_populate_record(NULL::jobs, p_row);
  SELECT state, owner, api_key_id, user_email INTO before FROM jobs
    WHERE created_at = r.created_at AND id = r.id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 'missing';
  END IF;
  IF before.state IN ('succeeded', 'failed', 'cancelled') THEN
    RETURN 'unchanged';
  END IF;
  leaves := before.state = 'queued' AND r.state <> 'queued';
  IF leaves THEN
    -- The owner a row counts against: platform/db/queued-counts.ts ownerOfRow.
    INSERT INTO queued_counts AS q (scope, n)
      VALUES ('owner/' || coalesce(before.owner, CASE WHEN before.api_key_id <> '' THEN 'key:' || before.api_key_id
                                                     ELSE 'owner:' || lower(trim(coalesce(before.user_email, ''))) END), -1)
      ON CONFLICT (scope) DO UPDATE SET n = greatest(0, q.n + EXCLUDED.n);
    IF before.api_key_id <> '' THEN
      INSERT INTO queued_counts AS q (scope, n) VALUES ('key/' || before.api_key_id, -1)
        ON CONFLICT (scope) DO UPDATE SET n = greatest(0, q.n + EXCLUDED.n);
    END IF;
  END IF;
  -- Forward only: queued → running → finished (a stale view never moves a row back).
  UPDATE jobs SET
    api_key_id = r.api_key_id, api_key_name = r.api_key_name, source = r.source, user_email = r.user_email,
    utility = r.utility, mode = r.mode, state = r.state, input_key = r.input_key, metadata = r.metadata,
    callback_url = r.callback_url, idempotency_key_hash = r.idempotency_key_hash,
    deadline_seconds = r.deadline_seconds, started_at = r.started_at, finished_at = r.finished_at,
    queue_ms = r.queue_ms, upstream_ms = r.upstream_ms, storage_ms = r.storage_ms, total_ms = r.total_ms,
    result = r.result, error = r.error, callback = r.callback, progress = r.progress,
    traceparent = r.traceparent, owner = r.owner, updated_at = now()
  WHERE created_at = r.created_at AND id = r.id AND state NOT IN ('succeeded', 'failed', 'cancelled')
    AND (state = 'queued' OR r.state <> 'queued');
  GET DIAGNOSTICS changed = ROW_COUNT;
  IF changed > 0 AND p_usage IS NOT NULL THEN
    -- platform/db/usage-table.ts countFinished, for a row the accept already counted.
    INSERT INTO usage_daily AS u (day, source, api_key_id, user_email, utility, api_key_name, jobs, succeeded,
                                  failed, cancelled, errors, total_ms, upstream_ms, output_bytes)
      VALUES ((p_usage ->> 'day')::date, p_usage ->> 'source', p_usage ->> 'api_key_id', p_usage ->> 'user_email',
              p_usage ->> 'utility', p_usage ->> 'api_key_name', 0, (p_usage ->> 'succeeded')::int,
              (p_usage ->> 'failed')::int, (p_usage ->> 'cancelled')::int, p_usage -> 'errors',
              (p_usage ->> 'total_ms')::bigint, (p_usage ->> 'upstream_ms')::bigint, (p_usage ->> 'output_bytes')::bigint)
      ON CONFLICT (day, source, api_key_id, user_email, utility) DO UPDATE SET
        succeeded = u.succeeded + EXCLUDED.succeeded,
        failed = u.failed + EXCLUDED.failed,
        cancelled = u.cancelled + EXCLUDED.cancelled,
        errors = (SELECT coalesce(jsonb_object_agg(k, coalesce((u.errors ->> k)::int, 0) + coalesce((EXCLUDED.errors ->> k)::int, 0)), '{}'::jsonb)
                  FROM (SELECT jsonb_object_keys(u.errors) AS k UNION SELECT jsonb_object_keys(EXCLUDED.errors)) keys),
        total_ms = u.total_ms + EXCLUDED.total_ms,
        upstream_ms = u.upstream_ms + EXCLUDED.upstream_ms,
        output_bytes = u.output_bytes + EXCLUDED.output_bytes;
  END IF;
  IF leaves THEN
    INSERT INTO queued_counts AS q (scope, n) VALUES ('platform', -1)
      ON CONFLICT (scope) DO UPDATE SET n = greatest(0, q.n + EXCLUDED.n);
  END IF;
  RETURN CASE WHEN changed > 0 THEN 'changed' ELSE 'unchanged' END;
END
$$;

-- Down Migration
DROP FUNCTION job_transition(jsonb, jsonb);
