-- An agent whose session Atrium's own end cut short, after it had read what
-- woke it, is woken again on the task to go on where it left off: an inbox
-- item of its own kind, 'resume'.
ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_kind_check;
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check CHECK (kind IN ('mention', 'question', 'answer', 'assigned', 'handoff', 'blocked', 'resume'));
