-- Up Migration

-- Direct uploads (POST /v1/files?size=): the file goes straight to storage by presigned
-- requests, and is a file only once the client completes it and storage holds exactly the size
-- announced. Until then its row is `pending`: it counts toward its key's quota with the size
-- announced, no job can name it, nothing lists it, and it expires with its upload window (the
-- sweep aborts what storage holds of it). `multipart_upload_id` is storage's id of a multipart
-- upload; `expiry_seconds` the file's lifetime once it is complete.
ALTER TABLE uploads
  ADD COLUMN state text NOT NULL DEFAULT 'ready' CHECK (state IN ('pending', 'ready')),
  ADD COLUMN multipart_upload_id text CHECK (length(multipart_upload_id) <= 1024),
  ADD COLUMN expiry_seconds integer CHECK (expiry_seconds > 0),
  ALTER COLUMN sha256 DROP NOT NULL,
  ADD CONSTRAINT uploads_ready_has_hash CHECK (state = 'pending' OR sha256 IS NOT NULL);

-- Down Migration
DELETE FROM uploads WHERE state = 'pending';
ALTER TABLE uploads
  DROP CONSTRAINT uploads_ready_has_hash,
  ALTER COLUMN sha256 SET NOT NULL,
  DROP COLUMN expiry_seconds,
  DROP COLUMN multipart_upload_id,
  DROP COLUMN state;
