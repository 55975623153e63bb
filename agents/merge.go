package agents

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/atrium-hq/atrium"
)

// maxDiff bounds the diff a session page shows.
const maxDiff = 2 << 20

// Diff is what a session's branch changed against its base (from where
// they forked), and whether it was cut at maxDiff.
func (s *Service) Diff(ctx context.Context, id string) (diff string, cut bool, err error) {
	cur, ag, err := s.withRepo(ctx, id, atrium.RoleWriter)
	if err != nil {
		return "", false, err
	}
	diff, err = git(ctx, ag.Repo, "diff", "--stat", "--patch", cur.Base+"..."+cur.Branch)
	if err != nil {
		return "", false, err
	}
	if len(diff) > maxDiff {
		return diff[:maxDiff], true, nil
	}
	return diff, false, nil
}

// withRepo is a session that has a worktree, and its agent.
func (s *Service) withRepo(ctx context.Context, id string, need atrium.Role) (Session, Agent, error) {
	if _, err := atrium.RequireActor(ctx, need); err != nil {
		return Session{}, Agent{}, err
	}
	cur, err := s.Session(ctx, id)
	if err != nil {
		return cur, Agent{}, err
	}
	if cur.Branch == "" {
		return cur, Agent{}, atrium.Errorf(atrium.EInvalid, "session %s has no repository: there is nothing to diff or merge", id)
	}
	ag, err := s.Agent(ctx, cur.Agent)
	if err != nil {
		return cur, ag, err
	}
	if ag.Repo == "" {
		return cur, ag, atrium.Errorf(atrium.EInvalid, "@%s no longer has a repository", ag.Handle)
	}
	return cur, ag, nil
}

// Merge merges an ended session's branch into its base branch in the
// repository's main checkout, which must be on that branch and clean. It is
// checked first with git merge-tree: a conflict is reported with its files,
// never forced. Writers only.
func (s *Service) Merge(ctx context.Context, id string) (string, error) {
	cur, ag, err := s.withRepo(ctx, id, atrium.RoleWriter)
	if err != nil {
		return "", err
	}
	if cur.EndedAt.IsZero() {
		return "", atrium.Errorf(atrium.EConflict, "session %s still runs: stop it first, so that its work is committed", id)
	}
	target := strings.TrimPrefix(cur.Base, "origin/")
	head, err := git(ctx, ag.Repo, "symbolic-ref", "--short", "HEAD")
	if err != nil || head != target {
		return "", atrium.Errorf(atrium.EConflict, "the repository's checkout %s is on %q, not %s: check %s out there to merge into it", ag.Repo, head, target, target)
	}
	if dirty, _ := git(ctx, ag.Repo, "status", "--porcelain", "--untracked-files=no"); dirty != "" {
		return "", atrium.Errorf(atrium.EConflict, "the repository's checkout %s has uncommitted changes: commit or stash them first", ag.Repo)
	}
	if out, err := git(ctx, ag.Repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", target, cur.Branch); err != nil {
		files := strings.Fields(out)
		if len(files) > 1 {
			files = files[1:] // the first line is the tree
		}
		return "", atrium.Errorf(atrium.EConflict, "%s does not merge cleanly into %s: conflicts in %s; nothing was merged", cur.Branch, target, strings.Join(files, ", "))
	}
	if _, err := git(ctx, ag.Repo, "merge", "--no-ff", "--no-edit", "-m", fmt.Sprintf("Merge %s (@%s's session %s)", cur.Branch, cur.Agent, id), cur.Branch); err != nil {
		return "", err
	}
	return git(ctx, ag.Repo, "rev-parse", "HEAD")
}

// RemoveWorktree removes an ended session's worktree (its branch stays).
// A worktree with uncommitted changes is kept unless force. Writers only.
func (s *Service) RemoveWorktree(ctx context.Context, id string, force bool) error {
	cur, ag, err := s.withRepo(ctx, id, atrium.RoleWriter)
	if err != nil {
		return err
	}
	if cur.EndedAt.IsZero() {
		return atrium.Errorf(atrium.EConflict, "session %s still runs in %s: stop it first", id, cur.Dir)
	}
	if _, err := os.Stat(cur.Dir); err != nil {
		return atrium.Errorf(atrium.ENotFound, "the worktree %s is gone already", cur.Dir)
	}
	if dirty, _ := git(ctx, cur.Dir, "status", "--porcelain"); dirty != "" && !force {
		return atrium.Errorf(atrium.EConflict, "the worktree %s has uncommitted changes: remove it anyway with force", cur.Dir)
	}
	args := []string{"worktree", "remove", cur.Dir}
	if force {
		args = []string{"worktree", "remove", "--force", cur.Dir}
	}
	_, err = git(ctx, ag.Repo, args...)
	return err
}
