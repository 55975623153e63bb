-- A browser session: what the web UI's cookie names, instead of the bearer
-- token itself. It is made from a token (and ends with it), stored hashed,
-- expires, and can be revoked on its own.
CREATE TABLE browser_sessions (
	id           INTEGER PRIMARY KEY,
	token_id     INTEGER NOT NULL REFERENCES tokens(id) ON DELETE CASCADE,
	hash         TEXT    NOT NULL UNIQUE,
	user_agent   TEXT    NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	last_seen_at INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	revoked_at   INTEGER
);
CREATE INDEX browser_sessions_token ON browser_sessions (token_id);
