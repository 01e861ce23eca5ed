-- Up Migration

-- The job record (docs/adr/0010-postgresql-job-record.md). One row per job, written by the
-- gateway when it accepts the job and by the operator at every transition (row first, status
-- second). Partitioned by creation day: expiry drops whole partitions (contract/db/partitions.ts
-- makes them ahead of time; the gateway makes a missing one on demand).
CREATE TABLE jobs (
  id text NOT NULL,
  created_at timestamptz NOT NULL,
  api_key_id text NOT NULL,
  api_key_name text NOT NULL,
  source text NOT NULL CHECK (source IN ('api', 'playground')),
  user_email text,
  utility text NOT NULL,
  mode text NOT NULL CHECK (mode IN ('sync', 'async')),
  state text NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  input_key text NOT NULL,
  -- The client's metadata, verbatim (JSON text: jsonb would refuse some strings JSON allows).
  metadata text,
  callback_url text,
  idempotency_key_hash text,
  deadline_seconds integer,
  started_at timestamptz,
  finished_at timestamptz,
  queue_ms integer,
  upstream_ms integer,
  storage_ms integer,
  total_ms integer,
  result jsonb,
  error jsonb,
  callback jsonb,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (created_at, id)
) PARTITION BY RANGE (created_at);

-- Every list the API and the console serve, newest first, by keyset (created_at, id): the key
-- scope and each filter the spec allows has an index that yields rows in that order.
CREATE INDEX jobs_key_recent ON jobs (api_key_id, created_at DESC, id DESC);
CREATE INDEX jobs_key_utility_recent ON jobs (api_key_id, utility, created_at DESC, id DESC);
CREATE INDEX jobs_key_state_recent ON jobs (api_key_id, state, created_at DESC, id DESC);
CREATE INDEX jobs_key_utility_state_recent ON jobs (api_key_id, utility, state, created_at DESC, id DESC);
CREATE INDEX jobs_playground_recent ON jobs (user_email, created_at DESC, id DESC) WHERE source = 'playground';
-- Jobs not finished yet: the operator's sweep for rows whose UtilityJob never came.
CREATE INDEX jobs_open ON jobs (created_at) WHERE state IN ('queued', 'running');

-- One Idempotency-Key, one job (spec rule 6): the unique key decides concurrent requests. Not
-- partitioned, so the constraint spans all of history; rows go with their job's retention.
CREATE TABLE idempotency_keys (
  api_key_id text NOT NULL,
  key_hash text NOT NULL,
  job_id text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (api_key_id, key_hash)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Usage per UTC day (of creation) x source x key (or playground user) x utility: created jobs
-- are counted when accepted, outcomes when a job first becomes terminal. Kept 400 days.
CREATE TABLE usage_daily (
  day date NOT NULL,
  source text NOT NULL,
  api_key_id text NOT NULL,
  user_email text NOT NULL,
  utility text NOT NULL,
  api_key_name text NOT NULL,
  jobs integer NOT NULL DEFAULT 0,
  succeeded integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  cancelled integer NOT NULL DEFAULT 0,
  errors jsonb NOT NULL DEFAULT '{}'::jsonb,
  total_ms bigint NOT NULL DEFAULT 0,
  upstream_ms bigint NOT NULL DEFAULT 0,
  output_bytes bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (day, source, api_key_id, user_email, utility)
);

-- Down Migration
DROP TABLE usage_daily;
DROP TABLE idempotency_keys;
DROP TABLE jobs;
