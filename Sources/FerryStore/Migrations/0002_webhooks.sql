-- Webhooks: delegates (endpoints), the deliveries of events to them, and every attempt.

-- A delegate's endpoint. Each session or task delegate gets its own row, so rotating a secret
-- or disabling one never touches another delegate.
CREATE TABLE webhook_endpoints (
    id                     text PRIMARY KEY,
    tenant_id              text NOT NULL REFERENCES tenants (id),
    url                    text NOT NULL,
    -- `whsec_…`; needed in clear to sign. Shown to the tenant only in the answer that set it.
    secret                 text NOT NULL,
    -- After a rotation the old secret also signs until previous_secret_until.
    previous_secret        text,
    previous_secret_until  timestamptz,
    -- Event types to deliver; NULL: all of them except dataTask.didReceiveData (opt-in).
    events                 text[],
    status                 text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
    disabled_reason        text,
    disabled_at            timestamptz,
    -- Since when every attempt failed; NULL once one succeeds. Long enough disables the endpoint.
    failing_since          timestamptz,
    -- The session or task whose delegate it was created for.
    session_id             text NOT NULL,
    task_id                text,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, created_at, id);

-- A task's own delegate overrides its session's.
ALTER TABLE sessions ADD COLUMN delegate_endpoint_id text REFERENCES webhook_endpoints (id);
ALTER TABLE tasks ADD COLUMN delegate_endpoint_id text REFERENCES webhook_endpoints (id);

-- For decision events: who decided, the receiver's reply or URLSession's default.
ALTER TABLE events ADD COLUMN decided_by text CHECK (decided_by IN ('receiver', 'default'));

-- How far the fan-out has read the outbox: every event at or below `position` has its
-- deliveries. One row, shared by the dispatchers of all instances (locked while advancing).
CREATE TABLE webhook_dispatch (
    id          smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    position    bigint NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO webhook_dispatch (id, position) VALUES (1, 0);

-- One event to one endpoint. The event id is the `webhook-id`, the same on every retry.
CREATE TABLE webhook_deliveries (
    id                text PRIMARY KEY,
    tenant_id         text NOT NULL REFERENCES tenants (id),
    endpoint_id       text NOT NULL REFERENCES webhook_endpoints (id),
    event_id          text NOT NULL REFERENCES events (id),
    event_position    bigint NOT NULL,
    event_type        text NOT NULL,
    session_id        text NOT NULL,
    task_id           text,
    -- Deliveries of one stream (a task's events, or a session's own events) to one endpoint
    -- go out in `sequence` order: one is attempted only once every earlier one is finished.
    stream_id         text NOT NULL,
    sequence          bigint NOT NULL,
    is_decision       boolean NOT NULL DEFAULT false,
    -- pending: waiting for an attempt (the first, or a retry after `last_error`)
    -- delivered: answered 2xx; failed: a decision nobody answered in time (the default
    -- applied; never retried); dead: every retry failed.
    status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'dead')),
    attempts          integer NOT NULL DEFAULT 0,
    next_attempt_at   timestamptz NOT NULL DEFAULT now(),
    -- The instance attempting it now; every write of the result carries lease_token.
    lease_owner       text,
    lease_token       bigint NOT NULL DEFAULT 0,
    lease_expires_at  timestamptz,
    last_status_code  integer,
    last_error        text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    delivered_at      timestamptz,
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_stream ON webhook_deliveries (endpoint_id, stream_id, sequence) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_tenant ON webhook_deliveries (tenant_id, created_at, id);
CREATE INDEX webhook_deliveries_session ON webhook_deliveries (session_id, status);
CREATE INDEX webhook_deliveries_task ON webhook_deliveries (task_id) WHERE task_id IS NOT NULL;

-- Every attempt, for the tenant to see why deliveries fail. Never holds a decision's reply
-- (it may carry credentials), nor anything of the signing secrets.
CREATE TABLE webhook_attempts (
    id                bigserial PRIMARY KEY,
    delivery_id       text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    started_at        timestamptz NOT NULL,
    duration_ms       integer NOT NULL,
    status_code       integer,
    error             text,
    response_excerpt  text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);
