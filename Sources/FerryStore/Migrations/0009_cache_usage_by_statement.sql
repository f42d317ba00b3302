-- cache_usage (0004) is kept by statement triggers for inserted and deleted entries. The row
-- trigger ran a PL/pgSQL upsert of the session's usage row for every entry: a put of a thousand
-- entries took 35 ms with it and 10 ms without. A statement trigger sees all of the statement's
-- rows at once (transition tables) and changes each session's row once.
-- Updates keep their row trigger (cache_usage_on_resize): its WHEN clause skips the updates
-- that only mark entries used, which every lookup makes, without calling any function; a
-- statement trigger fires on every UPDATE statement and cannot name columns.

-- The strongest lock first: dropping a trigger needs ACCESS EXCLUSIVE, and upgrading to it
-- from the lock CREATE TRIGGER takes could deadlock with a put of an instance still running.
LOCK TABLE cache_entries IN ACCESS EXCLUSIVE MODE;

-- Entries inserted (a put's new keys).
CREATE FUNCTION cache_usage_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO cache_usage AS u (session_id, bytes)
    SELECT session_id, sum(body_size) FROM added GROUP BY session_id ORDER BY session_id
    ON CONFLICT (session_id) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes;
    RETURN NULL;
END
$$;

-- Entries deleted (eviction, removal, clearing). The usage rows are updated in no set order:
-- whatever deletes entries locks their sessions' usage rows first (CacheStore.lockUsage), in
-- session order, so this never waits on one.
CREATE FUNCTION cache_usage_subtract() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE cache_usage u SET bytes = u.bytes - r.bytes
    FROM (SELECT session_id, sum(body_size) AS bytes FROM removed GROUP BY session_id) r
    WHERE u.session_id = r.session_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER cache_usage_after_insert AFTER INSERT ON cache_entries
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION cache_usage_add();
CREATE TRIGGER cache_usage_after_delete AFTER DELETE ON cache_entries
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION cache_usage_subtract();

DROP TRIGGER cache_usage_on_insert_or_delete ON cache_entries;
