-- Up Migration

-- How far a running job has got, as its runner reports it (contract/crd-schemas.ts
-- JobProgressSchema): the operator writes it here, then to the status, about every 2 s while a
-- job of a utility that counts progress runs. Kept once the job finishes. Null: none reported.
ALTER TABLE jobs ADD COLUMN progress jsonb;

-- Down Migration
ALTER TABLE jobs DROP COLUMN progress;
