package tasks

import (
	"context"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// Handles returns the @handles text mentions, in order, once each. A mention
// starts a word (so mail addresses are not mentions) and loses trailing
// punctuation ("Waiting on @duc." mentions duc). Code spans are skipped.
func Handles(text string) []string {
	var out []string
	inCode := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '`' {
			inCode = !inCode
			continue
		}
		if c != '@' || inCode || i > 0 && wordByte(text[i-1]) {
			continue
		}
		j := i + 1
		for j < len(text) && handleByte(text[j]) {
			j++
		}
		h := strings.TrimRight(text[i+1:j], ".-_")
		if h != "" && atrium.ValidateName("handle", h) == nil && !slices.Contains(out, h) {
			out = append(out, h)
		}
		i = j - 1
	}
	return out
}

func wordByte(c byte) bool {
	return c == '@' || c == '.' || c == '_' || c == '-' || c == '/' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func handleByte(c byte) bool {
	return c == '.' || c == '_' || c == '-' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
}

// mentions resolves the handles text mentions to members of a's workspace;
// unknown ones are an error naming them all.
func mentions(ctx context.Context, tx *store.Tx, a *atrium.Actor, text string) ([]atrium.Principal, error) {
	var out []atrium.Principal
	var unknown []string
	for _, h := range Handles(text) {
		p, err := member(ctx, tx, a, h)
		switch {
		case atrium.ErrorCode(err) == atrium.EInvalid:
			unknown = append(unknown, "@"+h)
		case err != nil:
			return nil, err
		default:
			out = append(out, p)
		}
	}
	if len(unknown) > 0 {
		return nil, atrium.Errorf(atrium.EInvalid, "unknown @mentions in workspace %s: %s (mention principals of the workspace; an agent exists once it has connected)",
			a.Workspace.Name, strings.Join(unknown, ", ")).WithDetails(map[string]any{"unknown": unknown})
	}
	return out, nil
}

// A Member is someone of the workspace a comment can mention.
type Member struct {
	Handle string               `json:"handle"`
	Kind   atrium.PrincipalKind `json:"kind"`
}

// Members lists who can be mentioned, asked or assigned in the caller's
// workspace, by handle: what @mention completion offers.
func (s *Service) Members(ctx context.Context) ([]Member, error) {
	a, err := reader(ctx)
	if err != nil {
		return nil, err
	}
	var out []Member
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ms, err := tx.Members(ctx, a.Workspace.ID)
		for _, m := range ms {
			out = append(out, Member{Handle: m.Principal.Handle, Kind: m.Principal.Kind})
		}
		return err
	})
	return out, err
}
