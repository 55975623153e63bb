package agents

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
)

// git runs git in dir with a bounded time and no prompt for credentials,
// and returns its trimmed output (also when it fails); a failure says what
// git said.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return strings.TrimSpace(out.String()), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// repoRoot is the top folder of the git repository at path.
func repoRoot(ctx context.Context, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	root, err := git(ctx, abs, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", atrium.Errorf(atrium.EInvalid, "%s is not a git repository: %v", path, err)
	}
	return filepath.Clean(root), nil
}

// defaultBranch is the branch new work starts from: the remote's default
// branch when there is a remote, else main or master, else the branch the
// main checkout is on.
func defaultBranch(ctx context.Context, root string) (string, error) {
	if ref, err := git(ctx, root, "symbolic-ref", "--short", "refs/remotes/origin/HEAD"); err == nil && ref != "" {
		return ref, nil // origin/main: the remote's, which the local one may lag
	}
	for _, b := range []string{"main", "master"} {
		if _, err := git(ctx, root, "rev-parse", "--verify", "--quiet", "refs/heads/"+b); err == nil {
			return b, nil
		}
	}
	b, err := git(ctx, root, "symbolic-ref", "--short", "HEAD")
	if err != nil {
		return "", atrium.Errorf(atrium.EInvalid, "cannot tell the default branch of %s: %v", root, err)
	}
	return b, nil
}

// A worktree is a session's working folder in a repository.
type worktree struct {
	Dir, Branch, Base string
}

// addWorktree creates (or, for a restart, finds) the worktree name beside
// the repository root — ../<name>, on branch atrium/<name> from the default
// branch — and verifies that git has it registered there on that branch:
// an agent must never find itself in the main checkout.
func addWorktree(ctx context.Context, root, name string) (worktree, error) {
	wt := worktree{Dir: filepath.Join(filepath.Dir(root), name), Branch: "atrium/" + name}
	base, err := defaultBranch(ctx, root)
	if err != nil {
		return wt, err
	}
	wt.Base = base
	if registered(ctx, root, wt) {
		return wt, nil // a restart finds its work where it left it
	}
	if _, err := os.Stat(wt.Dir); err == nil {
		if soonRegistered(ctx, root, wt) {
			return wt, nil
		}
		return wt, atrium.Errorf(atrium.EConflict, "%s already exists and is not %s's worktree on %s: move it away or remove it", wt.Dir, root, wt.Branch)
	}
	args := []string{"worktree", "add", "-b", wt.Branch, wt.Dir, base}
	if _, err := git(ctx, root, "rev-parse", "--verify", "--quiet", "refs/heads/"+wt.Branch); err == nil {
		args = []string{"worktree", "add", wt.Dir, wt.Branch} // the branch of an earlier session
	}
	if _, err := git(ctx, root, args...); err != nil {
		if soonRegistered(ctx, root, wt) {
			return wt, nil
		}
		return wt, atrium.Errorf(atrium.EInvalid, "cannot create the worktree %s: %v", wt.Dir, err)
	}
	if !registered(ctx, root, wt) {
		return wt, atrium.Errorf(atrium.EInternal, "git created %s but does not list it as a worktree on %s", wt.Dir, wt.Branch)
	}
	return wt, nil
}

// soonRegistered waits a little for wt to be registered, and reports
// whether it was. Atrium does not kill the git it runs when it dies (a git
// killed halfway through "worktree add" would leave a half checkout that
// looks like a worktree), so a git that a crashed Atrium started may still
// be making wt as the next Atrium starts the session again: found half
// made, the folder is that git's, not a conflict, once git has finished.
func soonRegistered(ctx context.Context, root string, wt worktree) bool {
	for range 20 {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(250 * time.Millisecond):
		}
		if registered(ctx, root, wt) {
			return true
		}
	}
	return false
}

// registered reports whether git lists wt.Dir as a worktree of root on
// wt.Branch, and the folder is that worktree's top.
func registered(ctx context.Context, root string, wt worktree) bool {
	list, err := git(ctx, root, "worktree", "list", "--porcelain")
	if err != nil {
		return false
	}
	want, _ := filepath.EvalSymlinks(wt.Dir)
	for block := range strings.SplitSeq(list, "\n\n") {
		var dir, branch string
		for line := range strings.SplitSeq(block, "\n") {
			if v, ok := strings.CutPrefix(line, "worktree "); ok {
				dir = v
			} else if v, ok := strings.CutPrefix(line, "branch "); ok {
				branch = v
			}
		}
		got, _ := filepath.EvalSymlinks(dir)
		if got != "" && got == want && branch == "refs/heads/"+wt.Branch {
			top, err := git(ctx, wt.Dir, "rev-parse", "--show-toplevel")
			top, _ = filepath.EvalSymlinks(top)
			return err == nil && top == want
		}
	}
	return false
}

// commitWork commits whatever the session changed in its worktree on its
// branch (002: "commits and pushes the artifact if in worktree"), as the
// agent, and pushes it when the repository has a remote. It reports the
// commit made, "" when there was nothing to commit.
func commitWork(ctx context.Context, wt worktree, agent, message string) (string, error) {
	if _, err := git(ctx, wt.Dir, "add", "-A"); err != nil {
		return "", err
	}
	if _, err := git(ctx, wt.Dir, "diff", "--cached", "--quiet"); err == nil {
		return "", nil // nothing staged
	}
	email := agent + "@agents.atrium.invalid"
	if _, err := git(ctx, wt.Dir, "-c", "user.name="+agent, "-c", "user.email="+email, "commit", "--no-verify", "-m", message); err != nil {
		return "", err
	}
	head, err := git(ctx, wt.Dir, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	if remote, _ := git(ctx, wt.Dir, "remote"); remote != "" {
		if _, err := git(ctx, wt.Dir, "push", "--set-upstream", strings.Fields(remote)[0], wt.Branch); err != nil {
			return head, fmt.Errorf("committed %s but could not push it: %w", head[:12], err)
		}
	}
	return head, nil
}
