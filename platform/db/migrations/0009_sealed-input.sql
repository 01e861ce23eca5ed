-- Up Migration

-- A small job's input, sealed with the job's own key (docs/adr/0043): it rides with the job
-- (the UtilityJob's sealedInput) instead of being written to storage, and the row keeps it for
-- the one reader that needs it after accept: a hand-off retried while the job is still queued.
-- Ciphertext only, NULL for a job whose input is stored in the bucket, and dropped as the row
-- leaves `queued` (the trigger below, in the same statement as the transition): a finished job's
-- row holds nothing its installation's key could open.
ALTER TABLE jobs ADD COLUMN sealed_input text CHECK (length(sealed_input) <= 16384);

CREATE FUNCTION jobs_sealed_input_while_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state <> 'queued' THEN
    NEW.sealed_input := NULL;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER jobs_sealed_input_while_queued BEFORE INSERT OR UPDATE ON jobs
  FOR EACH ROW EXECUTE FUNCTION jobs_sealed_input_while_queued();

-- Down Migration
DROP TRIGGER jobs_sealed_input_while_queued ON jobs;
DROP FUNCTION jobs_sealed_input_while_queued();
ALTER TABLE jobs DROP COLUMN sealed_input;
