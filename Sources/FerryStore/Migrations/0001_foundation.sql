-- Ferry's foundation: tenants and their keys, sessions, tasks, the event outbox, instances.
-- Ids are opaque text with a type prefix (ten_, ses_, tsk_, evt_, key_), made by Ferry.

CREATE TABLE settings (
    key         text PRIMARY KEY,
    value       bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tenants (
    id                        text PRIMARY KEY,
    name                      text NOT NULL,
    status                    text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    -- Quotas; NULL means unlimited.
    max_concurrent_transfers  integer,
    max_stored_bytes          bigint,
    requests_per_second       double precision,
    max_task_bytes            bigint,
    created_at                timestamptz NOT NULL DEFAULT now(),
    updated_at                timestamptz NOT NULL DEFAULT now()
);

-- Only a hash of each key is stored; lookup_prefix (a few characters of the random part) finds
-- the candidate rows, and the hash is compared in constant time.
CREATE TABLE api_keys (
    id             text PRIMARY KEY,
    tenant_id      text NOT NULL REFERENCES tenants (id),
    lookup_prefix  text NOT NULL,
    key_hash       bytea NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    last_used_at   timestamptz,
    revoked_at     timestamptz
);
CREATE INDEX api_keys_lookup ON api_keys (lookup_prefix) WHERE revoked_at IS NULL;
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);

CREATE TABLE sessions (
    id                    text PRIMARY KEY,
    tenant_id             text NOT NULL REFERENCES tenants (id),
    kind                  text NOT NULL CHECK (kind IN ('default', 'ephemeral', 'background')),
    identifier            text,
    session_description   text,
    configuration         jsonb NOT NULL,
    -- valid → finishing (finishTasksAndInvalidate) or canceling (invalidateAndCancel) → invalidated
    state                 text NOT NULL DEFAULT 'valid'
                          CHECK (state IN ('valid', 'finishing', 'canceling', 'invalidated')),
    next_task_identifier  bigint NOT NULL DEFAULT 1,
    next_event_sequence   bigint NOT NULL DEFAULT 1,
    created_at            timestamptz NOT NULL DEFAULT now(),
    invalidated_at        timestamptz
);
CREATE INDEX sessions_tenant ON sessions (tenant_id, created_at, id);
-- One live background session per identifier and tenant: re-creating it re-attaches.
CREATE UNIQUE INDEX sessions_background_identifier ON sessions (tenant_id, identifier)
    WHERE kind = 'background' AND state = 'valid';

CREATE TABLE tasks (
    id                          text PRIMARY KEY,
    tenant_id                   text NOT NULL REFERENCES tenants (id),
    session_id                  text NOT NULL REFERENCES sessions (id),
    task_identifier             bigint NOT NULL,
    kind                        text NOT NULL CHECK (kind IN ('data', 'download', 'upload')),
    state                       text NOT NULL CHECK (state IN ('suspended', 'running', 'canceling', 'completed')),
    priority                    double precision NOT NULL DEFAULT 0.5,
    task_description            text,
    earliest_begin_at           timestamptz,
    original_request            jsonb NOT NULL,
    current_request             jsonb,
    -- The host httpMaximumConnectionsPerHost counts this task against.
    host                        text NOT NULL,
    response                    jsonb,
    upload_source               jsonb,
    bytes_received              bigint NOT NULL DEFAULT 0,
    bytes_sent                  bigint NOT NULL DEFAULT 0,
    bytes_expected_to_receive   bigint NOT NULL DEFAULT -1,
    bytes_expected_to_send      bigint NOT NULL DEFAULT 0,
    error                       jsonb,
    -- URLSessionTaskMetrics of the last transfer, once it ended.
    metrics                     jsonb,
    idempotency_key             text,
    idempotency_fingerprint     bytea,

    -- Scheduling and ownership. A task in state 'running' with no live lease is waiting to be
    -- claimed; not_before holds it back (earliestBeginDate, retry backoff).
    not_before                  timestamptz,
    lease_owner                 text,
    lease_expires_at            timestamptz,
    -- Fencing token: bumped on every claim; every write of an owner carries the epoch it
    -- claimed with, so a stalled old owner cannot overwrite a new owner's progress.
    lease_epoch                 bigint NOT NULL DEFAULT 0,
    -- Why the owner must stop, set by suspend/cancel while a transfer is under way.
    stop_reason                 text,
    attempt_count               integer NOT NULL DEFAULT 0,
    -- started + timeoutIntervalForResource, fixed at the first start.
    resource_deadline           timestamptz,
    -- What is safely on disk of a download, with its validators: where a resume starts.
    checkpoint                  jsonb,
    -- uploadTask(withStreamedRequest:): the body stream the task currently asks for (1 for the
    -- first; each task.needNewBodyStream asks for the next). 0: none asked for yet.
    body_stream_generation      integer NOT NULL DEFAULT 0,
    -- The downloaded file's name in the tenant's area, once completed.
    download_file               text,
    next_event_sequence         bigint NOT NULL DEFAULT 1,

    created_at                  timestamptz NOT NULL DEFAULT now(),
    started_at                  timestamptz,
    completed_at                timestamptz,
    updated_at                  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (session_id, task_identifier)
);
CREATE INDEX tasks_session ON tasks (session_id, task_identifier);
CREATE INDEX tasks_tenant ON tasks (tenant_id, created_at);
CREATE UNIQUE INDEX tasks_idempotency ON tasks (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- What the schedulers scan: runnable tasks nobody holds.
CREATE INDEX tasks_claimable ON tasks (tenant_id, priority DESC, created_at)
    WHERE state = 'running' AND lease_owner IS NULL;
-- Partial files that checkpoints refer to (resume data keeps them after the task ends).
CREATE INDEX tasks_partial_file ON tasks ((checkpoint->>'partialFile')) WHERE checkpoint IS NOT NULL;
-- Leases to watch for expiry, and live transfers per session and host (connection limits).
CREATE INDEX tasks_leased ON tasks (lease_expires_at) WHERE lease_owner IS NOT NULL;
CREATE INDEX tasks_leased_hosts ON tasks (session_id, host) WHERE lease_owner IS NOT NULL;

-- Request bodies (inline uploads, httpBody) and data-task response bodies, apart from the task
-- row so that listing tasks never reads them.
CREATE TABLE task_bodies (
    task_id        text PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    request_body   bytea,
    response_body  bytea
);

-- URLCredentialStorage of each session: a user and password per protection space.
CREATE TABLE session_credentials (
    id                     text PRIMARY KEY,
    tenant_id              text NOT NULL REFERENCES tenants (id),
    session_id             text NOT NULL REFERENCES sessions (id),
    host                   text NOT NULL,
    port                   integer NOT NULL,
    protocol               text NOT NULL,
    realm                  text,
    authentication_method  text NOT NULL,
    user_name              text NOT NULL,
    password               text NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX session_credentials_space ON session_credentials
    (session_id, host, port, protocol, coalesce(realm, ''), authentication_method);

-- The cookie storage of default and background sessions (ephemeral ones keep theirs in memory):
-- one jar per session, read when a transfer starts and updated under the row's lock.
CREATE TABLE session_cookies (
    session_id  text PRIMARY KEY REFERENCES sessions (id),
    jar         jsonb NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The URL cache of default and background sessions: one entry per cache key, its body a file in
-- the tenant's cache folder (ephemeral sessions cache in memory).
CREATE TABLE cache_entries (
    session_id    text NOT NULL REFERENCES sessions (id),
    key           text NOT NULL,
    entry         jsonb NOT NULL,
    body_key      text NOT NULL,
    body_size     bigint NOT NULL,
    last_used_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, key)
);
CREATE INDEX cache_entries_lru ON cache_entries (session_id, last_used_at);

-- Bodies uploaded with PUT /v1/blobs, for uploadTask(fromFile:); the bytes are a file in the
-- tenant's blobs folder named by the id.
CREATE TABLE blobs (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES tenants (id),
    size        bigint NOT NULL,
    sha256      bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX blobs_tenant ON blobs (tenant_id, created_at, id);

-- The outbox: every event is written in the transaction of the state change it reports.
-- `position` orders all events; readers only go up to a horizon no open transaction can still
-- write below (FerryStore's EventHorizon), so a cursor never skips an event that commits late.
CREATE TABLE events (
    position    bigserial PRIMARY KEY,
    id          text NOT NULL UNIQUE,
    tenant_id   text NOT NULL,
    session_id  text NOT NULL,
    task_id     text,
    -- Gapless per task (per session for session events).
    sequence    bigint NOT NULL,
    type        text NOT NULL,
    data        jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    txid        xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX events_session ON events (session_id, position);
CREATE INDEX events_task ON events (task_id, sequence) WHERE task_id IS NOT NULL;
CREATE INDEX events_tenant ON events (tenant_id, position);

-- Live Ferry instances, for takeover decisions and the operators' overview.
CREATE TABLE instances (
    id                 text PRIMARY KEY,
    started_at         timestamptz NOT NULL DEFAULT now(),
    heartbeat_at       timestamptz NOT NULL DEFAULT now(),
    workers            integer NOT NULL,
    running_transfers  integer NOT NULL DEFAULT 0,
    version            text NOT NULL
);
