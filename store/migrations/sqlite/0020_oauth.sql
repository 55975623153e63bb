-- Atrium as an OAuth 2.1 authorization server for remote MCP clients (issue
-- 21). A grant a person consents to is a row of tokens, like an API token:
-- it is listed, revoked and audited the same way, and a revocation ends
-- every secret issued under it. client_id names the OAuth client that holds
-- it (empty for an API token), resource the one MCP URL its access tokens
-- work at (RFC 8707), role_cap the role the person consented to (never above
-- the principal's own), approved_by the person who consented (the grant may
-- act as an agent they administer).
ALTER TABLE tokens ADD COLUMN client_id TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN resource TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN role_cap TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN approved_by INTEGER NOT NULL DEFAULT 0;

-- Clients: registered dynamically (RFC 7591) or known by their Client ID
-- Metadata Document, whose last good copy is kept for when its host fails.
CREATE TABLE oauth_clients (
	client_id     TEXT    PRIMARY KEY,
	kind          TEXT    NOT NULL CHECK (kind IN ('dcr', 'cimd')),
	name          TEXT    NOT NULL,
	redirect_uris TEXT    NOT NULL, -- JSON array
	metadata      TEXT    NOT NULL, -- the document or registration, JSON
	remote        TEXT    NOT NULL DEFAULT '', -- the address that registered it
	created_at    INTEGER NOT NULL,
	fetched_at    INTEGER NOT NULL DEFAULT 0, -- cimd: when the copy was fetched
	fresh_until   INTEGER NOT NULL DEFAULT 0, -- cimd: when to fetch it again
	last_used_at  INTEGER NOT NULL DEFAULT 0
);

-- Authorization codes, single use and short-lived; token_id is the grant a
-- code was exchanged for, revoked if the code is replayed.
CREATE TABLE oauth_codes (
	hash         TEXT    PRIMARY KEY,
	client_id    TEXT    NOT NULL,
	principal_id INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	approved_by  INTEGER NOT NULL,
	role         TEXT    NOT NULL,
	resource     TEXT    NOT NULL,
	redirect_uri TEXT    NOT NULL,
	challenge    TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	token_id     INTEGER REFERENCES tokens(id) ON DELETE CASCADE
);
CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at);

-- The access and refresh tokens of a grant, by the hash of their secrets. A
-- refresh token exchanged for a new one is rotated_at then; the one before
-- the newest is still taken for a short grace.
CREATE TABLE oauth_secrets (
	hash       TEXT    PRIMARY KEY,
	token_id   INTEGER NOT NULL REFERENCES tokens(id) ON DELETE CASCADE,
	kind       TEXT    NOT NULL CHECK (kind IN ('access', 'refresh')),
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	rotated_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX oauth_secrets_token ON oauth_secrets (token_id);
CREATE INDEX oauth_secrets_expires ON oauth_secrets (expires_at);
