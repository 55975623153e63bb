package e2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

var rebuildNoteRE = regexp.MustCompile(`being rebuilt after an upgrade \((\d+) of (\d+) pages so far\)`)

// An upgrade that changes the search index's form rebuilds it from the
// pages. The server serves at once, and its searches say how far the
// rebuild is; killed in the middle of it, the next process goes on from
// where it stopped rather than starting over; at the end search finds what
// it found before the upgrade.
func TestAnUpgradeRebuildsTheIndexWhileTheServerServes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := ""
		if e == store.Postgres {
			db = storetest.PostgresDSN(t)
		}
		srv := startServe(t, db)
		vault := t.TempDir()
		if _, errOut, code := runAtrium(t, nil, "dev", "gen-vault", "-n", "3000", "--seed", "5", vault); code != 0 {
			t.Fatalf("gen-vault: exit %d\n%s", code, errOut)
		}
		if _, errOut, code := srv.cli(t, []string{"ATRIUM_AGENT=importer"}, "import", vault); code != 0 {
			t.Fatalf("import: exit %d\n%s", code, errOut)
		}
		queries := []string{"system data", "table", `"data table"`, "sys*"}
		search := func(cs *mcp.ClientSession, q string) (paths []string, note string) {
			t.Helper()
			res := structured(t, callTool(t, cs, "search_pages", map[string]any{"query": q, "limit": 20}))
			for _, h := range res["results"].([]any) {
				paths = append(paths, h.(map[string]any)["path"].(string))
			}
			note, _ = res["note"].(string)
			return paths, note
		}
		want := map[string][]string{}
		cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
		for _, q := range queries {
			want[q], _ = search(cs, q)
		}
		srv.stop(t)
		setMeta(t, srv, e, "docs.index_version", "7")

		srv.restart(t)
		cs = connectHTTP(t, srv.MCP(), srv.AdminToken, "")
		done := 0
		for deadline := time.Now().Add(time.Minute); done == 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no search said the rebuild had reindexed pages\n%s", srv.stderr)
			}
			_, note := search(cs, "system data")
			m := rebuildNoteRE.FindStringSubmatch(note)
			if m == nil {
				t.Fatalf("a search while the index is rebuilt says %q\n%s", note, srv.stderr)
			}
			if m[2] != "3000" {
				t.Fatalf("note %q: want 3000 pages in all", note)
			}
			done, _ = strconv.Atoi(m[1])
		}
		srv.kill(t)
		if strings.Contains(srv.stderr.String(), "rebuilt the search index") {
			t.Fatalf("the rebuild finished before the server was killed\n%s", srv.stderr)
		}

		srv.restart(t)
		for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(srv.stderr.String(), "rebuilt the search index"); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the rebuild did not finish\n%s", srv.stderr)
			}
		}
		log := srv.stderr.String()
		if n := strings.Count(log, `msg="rebuilding the search index" pages=`); n != 1 {
			t.Errorf("the rebuild started %d times, want once\n%s", n, log)
		}
		if m := regexp.MustCompile(`going on with the rebuild of the search index" done=(\d+)`).FindStringSubmatch(log); m == nil {
			t.Errorf("the restarted server did not go on with the rebuild\n%s", log)
		} else if n, _ := strconv.Atoi(m[1]); n < done {
			t.Errorf("the restarted server went on from %d pages, where a search had seen %d", n, done)
		}
		cs = connectHTTP(t, srv.MCP(), srv.AdminToken, "")
		got := map[string][]string{}
		for _, q := range queries {
			var note string
			if got[q], note = search(cs, q); note != "" {
				t.Errorf("%s: note %q after the rebuild", q, note)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("search after the rebuild (-before the upgrade +after):\n%s", diff)
		}
	})
}

// setMeta sets a key of the stopped server's store, as an older version
// would have left it.
func setMeta(t *testing.T, srv *server, e store.Engine, key, value string) {
	t.Helper()
	db := openRaw(t, srv, e)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := "UPDATE meta SET value = $1 WHERE key = $2"
	if e == store.SQLite {
		q = "UPDATE meta SET value = ? WHERE key = ?"
	}
	if res, err := db.ExecContext(ctx, q, value, key); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("no meta %s", key)
	}
}
