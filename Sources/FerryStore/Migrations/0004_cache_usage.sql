-- The bytes each session's URL cache holds, kept by a trigger on cache_entries. A put asks
-- whether its session is over capacity; summing every entry of the session to answer cost
-- more with every entry cached (0.7 ms a put at a thousand entries, all under the put's locks).
CREATE TABLE cache_usage (
    session_id  text PRIMARY KEY REFERENCES sessions (id),
    bytes       bigint NOT NULL
);

-- No instance may change entries between the count and the trigger (older instances keep
-- running while this migrates): the lock holds them off until the migration commits.
LOCK TABLE cache_entries IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO cache_usage (session_id, bytes)
SELECT session_id, sum(body_size) FROM cache_entries GROUP BY session_id;

-- Row-level, so that it is exact whatever changes the entries (a put replacing an entry, an
-- eviction, a removal, clearing a session's cache) and whichever instance does it.
CREATE FUNCTION cache_usage_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE cache_usage SET bytes = bytes - OLD.body_size WHERE session_id = OLD.session_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO cache_usage AS u (session_id, bytes) VALUES (NEW.session_id, NEW.body_size)
        ON CONFLICT (session_id) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER cache_usage_on_insert_or_delete AFTER INSERT OR DELETE ON cache_entries
    FOR EACH ROW EXECUTE FUNCTION cache_usage_track();
-- Marking an entry used (last_used_at) changes no size and must stay a plain update.
CREATE TRIGGER cache_usage_on_resize AFTER UPDATE OF body_size, session_id ON cache_entries
    FOR EACH ROW WHEN (OLD.body_size IS DISTINCT FROM NEW.body_size OR OLD.session_id IS DISTINCT FROM NEW.session_id)
    EXECUTE FUNCTION cache_usage_track();
