-- A session's delegate queue is serial: a session-level delivery (`session.*`, whose stream is
-- the session) waits until every earlier delivery of the session's tasks to the same endpoint
-- is finished (see WebhookLedger.claimDue). This index answers that question per delivery.
CREATE INDEX webhook_deliveries_session_order ON webhook_deliveries (endpoint_id, session_id, event_position)
    WHERE status = 'pending' AND task_id IS NOT NULL;

-- flush and reset: the session's next requests use new connections. Each bumps the generation
-- (instances hear it through NOTIFY and apply it to the transfers they run); a claim carries the
-- generation and since when it holds, so a transfer started later reuses no older connection.
ALTER TABLE sessions ADD COLUMN connection_generation bigint NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN connections_renewed_at timestamptz;

-- reset removed the task's stored body or file: reading it answers 410 Gone, not an empty 200.
ALTER TABLE tasks ADD COLUMN storage_removed_at timestamptz;
