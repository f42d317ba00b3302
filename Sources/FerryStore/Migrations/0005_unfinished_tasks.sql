-- Listing a session's unfinished tasks (`?state=running,suspended`, what a client polling for
-- the end of a batch asks) walked every completed task of the session before this.
CREATE INDEX tasks_unfinished ON tasks (session_id, task_identifier) WHERE state <> 'completed';
