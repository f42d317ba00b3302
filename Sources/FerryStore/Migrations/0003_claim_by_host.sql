-- The claim walks the runnable tasks one (session, host) group at a time and takes from each
-- only what its connection limit lets through, instead of ranking every queued task on every
-- claim: with thousands queued behind httpMaximumConnectionsPerHost, that ranking was most of
-- the database's work.
CREATE INDEX tasks_claimable_by_host ON tasks (session_id, host, priority DESC, created_at)
    WHERE state = 'running' AND lease_owner IS NULL;
