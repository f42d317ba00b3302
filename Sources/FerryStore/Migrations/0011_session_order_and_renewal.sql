-- A session's delegate queue is serial: a session-level delivery (`session.*`, whose stream is
-- the session) waits until every earlier delivery of the session's tasks to the same endpoint
-- is finished (see WebhookLedger.claimDue). This index answers that question per delivery.
CREATE INDEX webhook_deliveries_session_order ON webhook_deliveries (endpoint_id, session_id, event_position)
    WHERE status = 'pending' AND task_id IS NOT NULL;
