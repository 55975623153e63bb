package activity

import (
	"context"
	"encoding/json"
)

// AttentionKinds are the events that ask a person to act: a save in the
// mirror folder kept as a conflict copy, and a file of the folder the mirror
// left alone (a hidden file, a name a page cannot have, one over the size
// limit). The pages service records them.
var AttentionKinds = map[string]bool{"mirror.conflict": true, "mirror.skipped": true}

// An Attention is one thing that needs a person, as its newest event says.
type Attention struct {
	EventBy
	Path   string // the page, or the file left alone
	KeptAs string // where a conflict kept the folder's version
	Why    string // why a file was left alone
}

// NeedsAttention lists what needs a person among the recent activity: one
// entry per path and kind, newest first, at most limit (0: 20).
func (s *Service) NeedsAttention(ctx context.Context, limit int) ([]Attention, error) {
	if limit <= 0 {
		limit = 20
	}
	f, err := s.Feed(ctx, FeedRequest{Rows: limit, Kinds: AttentionKinds})
	if err != nil {
		return nil, err
	}
	var out []Attention
	seen := map[string]bool{}
	for _, r := range f.Rows {
		for _, e := range r.Events {
			if key := e.Kind + "\x00" + e.Subject; !seen[key] {
				seen[key] = true
				var p struct {
					Path   string `json:"path"`
					KeptAs string `json:"kept_as"`
					Why    string `json:"why"`
				}
				_ = json.Unmarshal(e.Payload, &p)
				if p.Path == "" {
					p.Path = e.Subject
				}
				out = append(out, Attention{EventBy: e, Path: p.Path, KeptAs: p.KeptAs, Why: p.Why})
				if len(out) == limit {
					return out, nil
				}
			}
		}
	}
	return out, nil
}
