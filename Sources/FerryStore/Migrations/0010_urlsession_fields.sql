-- URLSession's remaining properties (issue 16).

-- URLSession.shared: each tenant has one, a default session made on first use
-- (`/v1/sessions/shared`), which cannot be invalidated.
ALTER TABLE sessions ADD COLUMN is_shared boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX sessions_shared ON sessions (tenant_id) WHERE is_shared;

-- countOfBytesClientExpectsToSend / …ToReceive: the client's estimates, shown back
-- (NSURLSessionTransferSizeUnknown, -1, when not given).
ALTER TABLE tasks ADD COLUMN bytes_client_expects_to_send bigint NOT NULL DEFAULT -1;
ALTER TABLE tasks ADD COLUMN bytes_client_expects_to_receive bigint NOT NULL DEFAULT -1;

-- Configuration fields URLSession has and Ferry accepts without effect: existing sessions get
-- URLSession's defaults, so every stored configuration has every field.
UPDATE sessions SET configuration = jsonb_build_object(
    'allowsCellularAccess', true, 'allowsExpensiveNetworkAccess', true, 'allowsConstrainedNetworkAccess', true,
    'networkServiceType', 'default', 'multipathServiceType', 'none', 'shouldUseExtendedBackgroundIdleMode', false
) || configuration;

-- "A suspended task is not subject to timeouts": when a task was suspended, so that resuming it
-- moves resource_deadline on by the time spent suspended.
ALTER TABLE tasks ADD COLUMN suspended_at timestamptz;
