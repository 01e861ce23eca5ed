-- Up Migration

-- An upload's row written within its key's quota in one statement (platform/db/uploads-table.ts
-- insertUpload): the key's advisory lock taken (concurrent uploads of one key take turns, so no
-- two can both take the last room), its unexpired uploads counted, pending ones included, and the
-- row written only if it fits. Each statement of the function sees what was committed before it
-- ran (a volatile function, read committed), so the count follows the lock. `p_row` is the row as
-- JSON. Answers the key's files and bytes before this one, and whether it was written.
CREATE FUNCTION upload_insert(p_row jsonb, p_now timestamptz, p_max_files bigint, p_max_bytes bigint)
  RETURNS TABLE (held_files bigint, held_bytes bigint, inserted boolean) LANGUAGE plpgsql AS $$
DECLARE
  u uploads;
BEGIN
  u := jsonb_populate_record(NULL::uploads, p_row);
  PERFORM pg_advisory_xact_lock(hashtext('uploads/' || u.api_key_id));
  SELECT count(*), coalesce(sum(size), 0)::bigint INTO held_files, held_bytes FROM uploads
    WHERE api_key_id = u.api_key_id AND expires_at > p_now;
  inserted := held_files + 1 <= p_max_files AND held_bytes + u.size <= p_max_bytes;
  IF inserted THEN
    INSERT INTO uploads SELECT u.*;
  END IF;
  RETURN NEXT;
END
$$;

-- Down Migration
DROP FUNCTION upload_insert(jsonb, timestamptz, bigint, bigint);
