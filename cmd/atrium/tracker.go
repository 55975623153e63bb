package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/tasks"
	"github.com/atrium-hq/atrium/trackers/github"
)

// newTrackerCmd mirrors a workspace's tasks to an outside tracker. The
// credentials come from the environment (newTracker), never from a
// command line.
func newTrackerCmd(g *globals) *cobra.Command {
	root := &cobra.Command{Use: "tracker", Short: "Mirror this workspace's tasks to GitHub Issues (link, status, sync)"}
	var apiURL string
	link := &cobra.Command{
		Use:   "link github OWNER/REPO [--api-url URL]",
		Short: "Link the workspace (ATRIUM_WORKSPACE) to a repository; its tasks and comments are queued for the first push",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withLocal(cmd, true, func(ctx context.Context, a *app) error {
				l, err := a.Tasks.LinkTracker(ctx, args[0], args[1], apiURL)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "linked workspace %s to %s %s\n", l.Workspace, l.Kind, l.Repo)
				return nil
			})
		},
	}
	link.Flags().StringVar(&apiURL, "api-url", "", "the REST root: GitHub Enterprise Server's https://HOST/api/v3/ (default github.com)")
	var asJSON bool
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the link, what is mirrored and waiting, conflicts and the rate budget",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withLocal(cmd, false, func(ctx context.Context, a *app) error {
				st, err := a.Tasks.TrackerStatus(ctx)
				if err != nil {
					return err
				}
				if asJSON {
					return g.printJSON(st)
				}
				l := st.Link
				fmt.Fprintf(g.stdout, "linked:    %s %s%s\n", l.Kind, l.Repo, map[bool]string{true: " at " + l.APIURL, false: ""}[l.APIURL != ""])
				fmt.Fprintf(g.stdout, "mirrored:  %d issues, %d comments\npending:   %d changes to push (%d waiting out a failure)\n", st.Issues, st.Comments, st.Pending, st.Waiting)
				if st.Gone > 0 {
					fmt.Fprintf(g.stdout, "gone:      %d issues deleted or moved on the tracker\n", st.Gone)
				}
				fmt.Fprintf(g.stdout, "dead:      %d changes given up on%s\n", st.Dead, map[bool]string{true: " (atrium tracker retry)", false: ""}[st.Dead > 0])
				for _, d := range st.DeadLetters {
					fmt.Fprintf(g.stdout, "  %d: #%d %s after %d failures: %s\n", d.ID, d.Task, d.Kind, d.Failures, d.Error)
				}
				fmt.Fprintf(g.stdout, "last sync: %s\n", lastSync(l.LastSyncAt))
				if l.LastError != "" {
					fmt.Fprintf(g.stdout, "error:     %s\n", l.LastError)
				}
				fmt.Fprintf(g.stdout, "budget:    %s\n", budget(l.RateRemaining, l.RateLimit, l.RateReset))
				fmt.Fprintf(g.stdout, "conflicts: %d\n", len(st.Conflicts))
				for _, c := range st.Conflicts {
					fmt.Fprintf(g.stdout, "  %d: #%d %s: atrium %q, tracker %q (%s)\n", c.ID, c.Task, c.Field, c.Atrium, c.Remote, c.At.Format(time.RFC3339))
				}
				if len(st.Conflicts) > 0 {
					fmt.Fprintln(g.stdout, "  (settled? atrium tracker dismiss ID...)")
				}
				return nil
			})
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	var dry, syncJSON bool
	syncCmd := &cobra.Command{
		Use:   "sync [--dry-run]",
		Short: "Sync now: pull what changed on the tracker, push the outbox; print counts, calls and the budget left",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withLocal(cmd, false, func(ctx context.Context, a *app) error {
				st, err := a.Tasks.TrackerStatus(ctx)
				if err != nil {
					return err
				}
				tr, err := newTracker(st.Link)
				if err != nil {
					return err
				}
				rep, err := a.Tasks.SyncTracker(cmd.Context(), st.Link.WorkspaceID, tr, tasks.SyncOptions{DryRun: dry, Replica: replicaName(), Dead: deadHere})
				if syncJSON {
					if perr := g.printJSON(rep); perr != nil {
						return perr
					}
				} else {
					printReport(g, rep)
				}
				return err
			})
		},
	}
	syncCmd.Flags().BoolVar(&dry, "dry-run", false, "count what a sync would do; change nothing on either side")
	syncCmd.Flags().BoolVar(&syncJSON, "json", false, "print JSON")
	retry := &cobra.Command{
		Use:   "retry [ID...]",
		Short: "Queue the changes given up on (all, or those IDs from 'tracker status') again; a task whose issue is gone gets a new one",
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := trackerIDs(args, "a dead change's ID")
			if err != nil {
				return err
			}
			return g.withLocal(cmd, true, func(ctx context.Context, a *app) error {
				n, err := a.Tasks.RetryTracker(ctx, ids)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "queued %d changes again; the next sync pushes them\n", n)
				return nil
			})
		},
	}
	dismiss := &cobra.Command{
		Use:   "dismiss [ID...]",
		Short: "Drop conflicts once settled (all, or those IDs from 'tracker status'); Atrium's value stays as it is",
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := trackerIDs(args, "a conflict's ID")
			if err != nil {
				return err
			}
			return g.withLocal(cmd, true, func(ctx context.Context, a *app) error {
				n, err := a.Tasks.DismissTrackerConflicts(ctx, ids)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "dismissed %d conflicts\n", n)
				return nil
			})
		},
	}
	root.AddCommand(link, status, syncCmd, retry, dismiss)
	return root
}

// trackerIDs reads the IDs 'tracker status' lists.
func trackerIDs(args []string, what string) ([]int64, error) {
	var ids []int64
	for _, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return nil, atrium.Errorf(atrium.EInvalid, "%s is a number from 'atrium tracker status', not %q", what, a)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func printReport(g *globals, r tasks.SyncReport) {
	if r.Skipped {
		fmt.Fprintln(g.stdout, "skipped: another replica is syncing this link")
		return
	}
	dry := ""
	if r.DryRun {
		dry = " (dry run: nothing changed)"
	}
	fmt.Fprintf(g.stdout, "pushed:    %d changes: %d issues created, %d updated, %d comments; %d recovered after a crash%s\n",
		r.Pushed, r.IssuesCreated, r.IssuesUpdated, r.CommentsPushed, r.Recovered, dry)
	fmt.Fprintf(g.stdout, "pending:   %d\n", r.Pending)
	if r.Dead > 0 {
		fmt.Fprintf(g.stdout, "dead:      %d changes given up on (atrium tracker status; atrium tracker retry)\n", r.Dead)
	}
	fmt.Fprintf(g.stdout, "pulled:    %d issues changed: %d tasks created, %d updated, %d comments\n", r.IssuesChanged, r.TasksCreated, r.TasksUpdated, r.CommentsPulled)
	fmt.Fprintf(g.stdout, "conflicts: %d\n", r.Conflicts)
	fmt.Fprintf(g.stdout, "calls:     %d (%d answered 304, free)\n", r.Calls, r.NotModified)
	fmt.Fprintf(g.stdout, "budget:    %s\n", budget(r.RateRemaining, r.RateLimit, r.RateReset))
}

func budget(rem, limit int, reset time.Time) string {
	if limit < 0 {
		return "unknown (no call answered yet)"
	}
	return fmt.Sprintf("%d of %d left, resets %s", rem, limit, reset.Format(time.RFC3339))
}

func lastSync(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Format(time.RFC3339)
}

// newTracker is the adapter of a link, with its credentials from the
// environment: the link's App (ATRIUM_GITHUB_APP_*) or else GITHUB_TOKEN,
// and the agents' own Apps (ATRIUM_AGENT_<HANDLE>_GITHUB_APP_*,
// ATRIUM_GITHUB_APPS). A shell's GITHUB_TOKEN, often there for other tools,
// does not stop an App from being the link's identity.
func newTracker(l tasks.TrackerLink) (tasks.Tracker, error) {
	owner, repo, err := github.ParseRepo(l.Repo)
	if err != nil {
		return nil, err
	}
	app, agents, err := github.AppsFromEnv(os.Environ())
	if err != nil {
		return nil, err
	}
	cfg := github.Config{Owner: owner, Repo: repo, APIURL: l.APIURL, App: app, Apps: agents}
	if app == nil {
		cfg.Token = os.Getenv("GITHUB_TOKEN")
	}
	return github.New(cfg)
}

// deadHere reports whether holder (a replicaName) is a process of this host
// that no longer runs: a sync killed mid-push leaves its claim behind.
func deadHere(holder string) bool {
	host, pid, ok := strings.Cut(holder, ":")
	me, _ := os.Hostname()
	n, err := strconv.Atoi(pid)
	if !ok || host != me || err != nil || n <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(n, 0), syscall.ESRCH)
}

func replicaName() string {
	h, _ := os.Hostname()
	return h + ":" + strconv.Itoa(os.Getpid())
}

// syncTrackers is a server's sync worker: every interval it syncs each
// linked workspace it can claim (one replica at a time per link), keeping
// one client per link so that its ETags make an unchanged poll free. A
// webhook's delivery syncs its workspace at once; a task event, committed
// by any process or replica, pushes its workspace's outbox at once; and
// every two seconds the outbox is looked at for what is due, which costs no
// call while nothing changed.
// ATRIUM_TRACKER_INTERVAL sets the interval (default 1m; 0 turns it off).
func syncTrackers(ctx context.Context, ts *tasks.Service, log *slog.Logger) {
	every := time.Minute
	if v := os.Getenv("ATRIUM_TRACKER_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			log.Warn("ATRIUM_TRACKER_INTERVAL is a duration", "value", v)
		} else {
			every = d
		}
	}
	if every <= 0 {
		return
	}
	clients := map[string]tasks.Tracker{}
	replica := replicaName()
	tick := time.NewTicker(every)
	defer tick.Stop()
	// The outbox is looked at every two seconds for what no event announced
	// (a change whose backoff ended); a task event pushes its workspace at
	// once.
	push := time.NewTicker(2 * time.Second)
	defer push.Stop()
	changes := ts.TrackerChanges(ctx)
	for {
		var only []int64 // nil: every link
		pushOnly := false
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case ws := <-ts.TrackerWake():
			only = []int64{ws}
		case ws := <-changes:
			// A burst of writes is one push per workspace, not one each.
			only, pushOnly = []int64{ws}, true
			for drained := false; !drained; {
				select {
				case ws := <-changes:
					if !slices.Contains(only, ws) {
						only = append(only, ws)
					}
				default:
					drained = true
				}
			}
		case <-push.C:
			due, err := ts.TrackersDue(ctx)
			if err != nil || len(due) == 0 {
				continue
			}
			only, pushOnly = due, true
		}
		links, err := ts.TrackerLinks(ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("tracker links", "err", err)
			}
			continue
		}
		for _, l := range links {
			if only != nil && !slices.Contains(only, l.WorkspaceID) {
				continue
			}
			key := fmt.Sprintf("%d %s %s %s", l.WorkspaceID, l.Kind, l.Repo, l.APIURL)
			tr := clients[key]
			if tr == nil {
				if tr, err = newTracker(l); err != nil {
					log.Warn("tracker", "repo", l.Repo, "err", err)
					continue
				}
				clients[key] = tr
			}
			rep, err := ts.SyncTracker(ctx, l.WorkspaceID, tr, tasks.SyncOptions{Replica: replica, Lease: 2*every + time.Minute, Dead: deadHere, PushOnly: pushOnly})
			if err != nil && ctx.Err() == nil {
				log.Warn("tracker sync", "repo", l.Repo, "err", err)
			} else if rep.Pushed+rep.CommentsPulled+rep.TasksCreated+rep.TasksUpdated > 0 {
				log.Info("tracker sync", "repo", l.Repo, "pushed", rep.Pushed, "pulled_comments", rep.CommentsPulled, "calls", rep.Calls, "budget", rep.RateRemaining)
			}
		}
	}
}
