-- Every index on tasks costs an entry on each insert and on each update that moves the row:
-- three or more per task. Two of them duplicate others:
-- tasks_session is the index of the UNIQUE (session_id, task_identifier) constraint again, and
-- tasks_claimable has the predicate of tasks_claimable_by_host, which the claim walks instead
-- since 0003 (and which serves the counts of queued tasks as well).
DROP INDEX tasks_session;
DROP INDEX tasks_claimable;
