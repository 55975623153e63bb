-- The revision whose content the mirror last read from (or found in) the
-- file, beside the one it last wrote there. When the mirror wrote newer
-- store content over the file since, an editor may still hold the older
-- text: a save that keeps none of the changes between the two was made from
-- the older base and is a conflict, not a new revision.
ALTER TABLE mirror_state ADD COLUMN read_revision INTEGER NOT NULL DEFAULT 0;
