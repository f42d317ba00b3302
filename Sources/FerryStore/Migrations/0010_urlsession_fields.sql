-- URLSession's remaining properties (issue 16).

-- URLSession.shared: each tenant has one, a default session made on first use
-- (`/v1/sessions/shared`), which cannot be invalidated.
ALTER TABLE sessions ADD COLUMN is_shared boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX sessions_shared ON sessions (tenant_id) WHERE is_shared;

