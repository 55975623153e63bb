package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/store"
)

// Tasks under concurrent agents through the real binary, on both engines:
// agents over HTTP and agents in their own `atrium mcp` processes claim one
// task at once (exactly one wins, the others are told who), comment on one
// task together and update its status without a revision (every
// acknowledged comment is there, none meets a conflict), and update one task
// from one revision (one wins, the rest get conflict); no call fails
// otherwise and /healthz answers throughout.
func TestReliabilityTasks(t *testing.T) {
	eachEngine(t, func(t *testing.T, e store.Engine, db string) {
		srv := startServe(t, db)
		var callers []caller
		for i := range 4 {
			token := srv.createToken(t, fmt.Sprintf("web%d", i), "", "writer")
			callers = append(callers, mcpCaller{connectHTTP(t, srv.MCP(), token, ""), "http"})
		}
		for i := range 2 {
			callers = append(callers, mcpCaller{connectStdio(t, []string{fmt.Sprintf("ATRIUM_AGENT=local%d", i)}, srv.globalArgs()...), "stdio"})
		}
		admin := mcpCaller{connectHTTP(t, srv.MCP(), srv.AdminToken, ""), "http"}
		for _, title := range []string{"Contended", "Busy thread", "Shared edit"} {
			if _, code, err := admin.call("task_create", map[string]any{"title": title}); err != nil || code != "" {
				t.Fatalf("task_create: %v %s", err, code)
			}
		}
		const comments = 15
		var (
			wg                                    sync.WaitGroup
			mu                                    sync.Mutex
			winners, held, acked, won, conflicted int64
			unexpected                            []string
			healthBad                             atomic.Int64
		)
		bad := func(what string) {
			mu.Lock()
			unexpected = append(unexpected, what)
			mu.Unlock()
		}
		stop := make(chan struct{})
		go func() { // /healthz while the agents work
			for {
				select {
				case <-stop:
					return
				default:
				}
				if res, err := http.Get(srv.URL + "/healthz"); err != nil || res.StatusCode != http.StatusOK {
					healthBad.Add(1)
				} else {
					res.Body.Close()
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		for i, c := range callers {
			wg.Go(func() {
				switch _, code, err := c.call("task_claim", map[string]any{"issue_number": 1}); {
				case err != nil:
					bad(fmt.Sprintf("%s claim: %v", c.name(), err))
				case code == "":
					atomic.AddInt64(&winners, 1)
				case code == "conflict":
					atomic.AddInt64(&held, 1)
				default:
					bad(fmt.Sprintf("%s claim: %s", c.name(), code))
				}
				for j := range comments {
					// Every other one a status update, which changes the task
					// too (its status text and progress) and sends no
					// revision: it must never meet a conflict.
					tool, args := "task_post_comment", map[string]any{"issue_number": 2, "comment": fmt.Sprintf("caller %d says %d", i, j), "comment_type": "status"}
					if j%2 == 1 {
						tool, args = "task_update_status", map[string]any{"issue_number": 2, "status": fmt.Sprintf("caller %d at %d", i, j), "progress": j}
					}
					if _, code, err := c.call(tool, args); err != nil || code != "" {
						bad(fmt.Sprintf("%s %s: %v %s", c.name(), tool, err, code))
						continue
					}
					atomic.AddInt64(&acked, 1)
				}
				switch _, code, err := c.call("task_update", map[string]any{"issue_number": 3, "base_revision": 1, "status_text": fmt.Sprint("caller ", i)}); {
				case err != nil:
					bad(fmt.Sprintf("%s update: %v", c.name(), err))
				case code == "":
					atomic.AddInt64(&won, 1)
				case code == "conflict":
					atomic.AddInt64(&conflicted, 1)
				default:
					bad(fmt.Sprintf("%s update: %s", c.name(), code))
				}
			})
		}
		wg.Wait()
		close(stop)
		stored, _, _ := admin.call("task_get_comments", map[string]any{"issue_number": 2})
		got, _ := stored["comments"].([]any)
		lost := acked - int64(len(got))
		report(t, "tasks/"+string(e), "callers", len(callers), "claim_winners", winners, "claims_refused", held, "comments_acked", acked,
			"comments_lost", lost, "update_winners", won, "updates_conflicted", conflicted, "unexpected", len(unexpected), "healthz_failed", healthBad.Load())
		if winners != 1 || held != int64(len(callers)-1) || won != 1 || conflicted != int64(len(callers)-1) || lost != 0 || len(unexpected) > 0 || healthBad.Load() > 0 {
			t.Fatalf("claims %d won %d refused; updates %d won %d conflicted; %d comments lost; unexpected %v; /healthz failed %d times",
				winners, held, won, conflicted, lost, unexpected, healthBad.Load())
		}
	})
}
