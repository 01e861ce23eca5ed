-- Up Migration

-- Uploads (`POST /v1/files`): a file an API key stored for its own jobs to read, by its s3://
-- name, until it expires. The row is written once storage holds the whole file, so a file is
-- usable exactly while its row exists and has not expired; the operator's sweep deletes expired
-- files from storage, then their rows (platform/db/uploads-table.ts).
CREATE TABLE uploads (
  id text PRIMARY KEY CHECK (id ~ '^file_[0-9A-HJKMNP-TV-Z]{26}$'),
  api_key_id text NOT NULL CHECK (length(api_key_id) <= 100),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  size bigint NOT NULL CHECK (size >= 0),
  content_type text NOT NULL CHECK (length(content_type) <= 255),
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  storage_key text NOT NULL CHECK (length(storage_key) <= 400),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

-- A key's uploads, newest first (the list's keyset), and its count and bytes (the quotas).
CREATE INDEX uploads_key_recent ON uploads (api_key_id, created_at DESC, id DESC);
-- The sweep: what expired first.
CREATE INDEX uploads_expiry ON uploads (expires_at);

-- Down Migration
DROP TABLE uploads;
