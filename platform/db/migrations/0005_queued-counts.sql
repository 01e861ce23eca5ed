-- Up Migration

-- Whose job it is (contract/owners.ts): fair shares and queued ceilings count per owner.
-- Null on jobs accepted before owners; their owner is their key's (key:<id>) or their playground
-- person's (owner:<e-mail>), the rule platform/db/queued-counts.ts applies to such rows.
ALTER TABLE jobs ADD COLUMN owner text CHECK (length(owner) <= 300);

-- Queued jobs counted per scope ('platform', 'owner/<owner>', 'key/<api key id>'), kept in the
-- transaction that moves a row into or out of 'queued': a ceiling check reads one row instead of
-- counting the queue (platform/db/queued-counts.ts).
CREATE TABLE queued_counts (
  scope text PRIMARY KEY,
  n integer NOT NULL
);

INSERT INTO queued_counts (scope, n)
SELECT 'platform', count(*) FROM jobs WHERE state = 'queued';

INSERT INTO queued_counts (scope, n)
SELECT 'key/' || api_key_id, count(*) FROM jobs WHERE state = 'queued' AND api_key_id <> '' GROUP BY api_key_id;

INSERT INTO queued_counts (scope, n)
SELECT 'owner/' || CASE WHEN api_key_id <> '' THEN 'key:' || api_key_id ELSE 'owner:' || lower(trim(coalesce(user_email, ''))) END, count(*)
FROM jobs WHERE state = 'queued' GROUP BY 1;

-- Down Migration
DROP TABLE queued_counts;
ALTER TABLE jobs DROP COLUMN owner;
