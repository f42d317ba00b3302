-- Looks up URL cache entries by (session, key), marking those found used now (for least
-- recently used eviction). Transfers that start together look theirs up in one call.
-- - Entries are read whatever locks them; only the ones nobody holds are marked (in key order,
--   SKIP LOCKED), so a lookup never waits and cannot deadlock with a put or another lookup. A
--   put that holds an entry is about to mark it anyway.
-- - A function so that it runs without sequential scans whatever the statistics say: right
--   after a burst of puts they lag, and the join would read the whole cache.
CREATE FUNCTION cache_entries_use(sessions text[], keys text[])
RETURNS TABLE (ordinal bigint, entry jsonb)
LANGUAGE sql SET enable_seqscan = off AS $$
    WITH wanted AS (
        SELECT * FROM unnest(sessions, keys) WITH ORDINALITY AS w(session_id, key, ordinal)
    ), marked AS (
        UPDATE cache_entries c SET last_used_at = now()
        FROM (
            SELECT e.session_id, e.key FROM cache_entries e JOIN wanted w USING (session_id, key)
            ORDER BY e.session_id, e.key
            FOR UPDATE OF e SKIP LOCKED
        ) free
        WHERE c.session_id = free.session_id AND c.key = free.key
    )
    SELECT w.ordinal, c.entry FROM wanted w JOIN cache_entries c USING (session_id, key)
$$;
