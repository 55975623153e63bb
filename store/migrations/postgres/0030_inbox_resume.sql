-- An agent whose session Atrium's own end cut short, after it had read what
-- woke it, is woken again on the task to go on where it left off: an inbox
-- item of its own kind, 'resume', naming the item it had read (resumes).
ALTER TABLE inbox_items DROP CONSTRAINT IF EXISTS inbox_items_kind_check;
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check CHECK (kind IN ('mention', 'question', 'answer', 'assigned', 'handoff', 'blocked', 'resume'));
ALTER TABLE inbox_items ADD COLUMN IF NOT EXISTS resumes BIGINT REFERENCES inbox_items(id) ON DELETE SET NULL;
