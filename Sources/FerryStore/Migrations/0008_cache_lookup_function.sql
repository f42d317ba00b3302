-- Looks up URL cache entries by (session, key), marking each found one used now (for least
-- recently used eviction). Transfers that start together look theirs up in one call. A
-- function so that it can run without sequential scans whatever the statistics say: right
-- after a burst of puts they lag, and the join would otherwise read the whole cache.
CREATE FUNCTION cache_entries_use(sessions text[], keys text[])
RETURNS TABLE (ordinal bigint, entry jsonb)
LANGUAGE sql SET enable_seqscan = off AS $$
    UPDATE cache_entries c SET last_used_at = now()
    FROM unnest(sessions, keys) WITH ORDINALITY AS w(session_id, key, ordinal)
    WHERE c.session_id = w.session_id AND c.key = w.key
    RETURNING w.ordinal, c.entry
$$;
