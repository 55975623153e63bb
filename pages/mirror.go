package pages

import (
	"context"

	"github.com/atrium-hq/atrium/store"
)

// SyncState is what the folder mirror last synced for one file: the base
// that tells an edit in the folder from one in the store.
type SyncState = store.SyncState

// MirrorStates returns the sync state of every file of the mirror folder dir.
func (s *Service) MirrorStates(ctx context.Context, dir string) (map[string]SyncState, error) {
	a, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	var out map[string]SyncState
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		out, err = tx.MirrorStates(ctx, a.Workspace.ID, dir)
		return err
	})
	return out, err
}

// SetMirrorState records what was synced for a file; a zero Hash forgets it.
func (s *Service) SetMirrorState(ctx context.Context, dir string, st SyncState) error {
	a, err := writer(ctx)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if st.Hash == "" {
			return tx.DeleteMirrorState(ctx, a.Workspace.ID, dir, st.Path)
		}
		return tx.SetMirrorState(ctx, a.Workspace.ID, dir, st)
	})
}

// Attachment event kinds beside EventAttachmentAdded; the subject is the
// attachment's path.
const (
	EventAttachmentDeleted = "attachment.deleted"
	EventAttachmentMoved   = "attachment.moved" // payload from: the old path
)

// DeleteAttachment removes the attachment at path.
func (s *Service) DeleteAttachment(ctx context.Context, path string) error {
	a, err := writer(ctx)
	if err != nil {
		return err
	}
	clean, err := normalize(path, "attachment path")
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		att, _, err := tx.AttachmentByPath(ctx, a.Workspace.ID, clean)
		if err != nil {
			return err
		}
		if err := tx.DeleteAttachment(ctx, a.Workspace.ID, att.ID); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventAttachmentDeleted, att.Path, map[string]any{"path": att.Path, "origin": originOf(ctx)})
	})
}

// ContentHash is the hash pages are compared by: the mirror uses it to tell
// whether a file holds a page's current content.
func ContentHash(content string) string { return contentHash(content) }

// EventMirrorConflict records that a file edit lost to a newer store version
// and was kept beside the page instead.
const EventMirrorConflict = "mirror.conflict"

// RecordMirrorConflict puts a mirror conflict in the event log: the page, and
// the file where the folder's version was kept.
func (s *Service) RecordMirrorConflict(ctx context.Context, path, kept string) error {
	a, err := writer(ctx)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventMirrorConflict, path, map[string]any{"path": path, "kept_as": kept})
	})
}

// EventMirrorSkipped records that the mirror left a file of its folder
// alone (a hidden file, a name a page cannot have, a file over the size
// limit, a symlink), and why: the person who put it there should know.
const EventMirrorSkipped = "mirror.skipped"

// RecordMirrorSkipped puts a file the mirror left alone in the event log.
func (s *Service) RecordMirrorSkipped(ctx context.Context, path, why string) error {
	a, err := writer(ctx)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventMirrorSkipped, path, map[string]any{"path": path, "why": why})
	})
}
