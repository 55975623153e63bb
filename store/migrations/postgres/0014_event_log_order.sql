-- The event log's order (see store/events.go). Transactions commit out of
-- order, so an event is written without a seq and stamped after its commit;
-- readers read seq > their position and never skip one still in flight.
ALTER TABLE events ADD COLUMN seq BIGINT;
UPDATE events SET seq = id;
CREATE UNIQUE INDEX events_seq ON events (seq);
CREATE INDEX events_workspace_seq ON events (workspace_id, seq);
CREATE INDEX events_unstamped ON events (id) WHERE seq IS NULL;
