-- A task's events are numbered on from its last event (EventBatch), under the task's row lock,
-- no longer by a counter on the task's row: bumping it wrote a new version of that wide row,
-- with an entry in each of its indexes, every time events were written. Unique, so that a
-- writer that did not hold the lock fails instead of giving two events one number.
CREATE UNIQUE INDEX events_task_sequence ON events (task_id, sequence) WHERE task_id IS NOT NULL;
DROP INDEX events_task;
ALTER TABLE tasks DROP COLUMN next_event_sequence;
