-- Up Migration

-- The delivery log of a job's callback (contract/crd-schemas.ts CallbackAttemptEntry): one
-- element per attempt, appended by the operator's callback controller after each one, across
-- redelivery rounds. Null: no attempt yet. Dropped with its day's partition like the rest of
-- the row.
ALTER TABLE jobs ADD COLUMN callback_log jsonb;

-- Down Migration
ALTER TABLE jobs DROP COLUMN callback_log;
