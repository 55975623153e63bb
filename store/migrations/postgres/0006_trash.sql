-- Deleted pages go to a trash, with their history, attachments and threads,
-- until they are restored or purged. A trashed page keeps its row; its path
-- key (and those of its attachments and threads) becomes 'trash:<uid>', a key
-- no path can have (':' is not allowed in paths), so the path is free for a
-- new page and no lookup by path, link or folder finds it.
ALTER TABLE pages ADD COLUMN trashed_at BIGINT;
ALTER TABLE pages ADD COLUMN trashed_by BIGINT REFERENCES principals(id) ON DELETE SET NULL;
CREATE INDEX pages_trash ON pages (workspace_id, trashed_at) WHERE trashed_at IS NOT NULL;
