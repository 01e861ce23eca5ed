-- Up Migration

-- The job's W3C trace context (`traceparent`, 55 characters), when it was accepted with tracing
-- on: the UtilityJob's annotation dutil.io/traceparent, kept with the record so a callback
-- redelivered after the UtilityJob is gone still joins the job's trace. Null: not traced.
ALTER TABLE jobs ADD COLUMN traceparent text CHECK (length(traceparent) <= 64);

-- Down Migration
ALTER TABLE jobs DROP COLUMN traceparent;
