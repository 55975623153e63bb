package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/store"
)

// TestReliabilityCrash kills `atrium serve` with SIGKILL at random moments
// while writers write over REST and MCP, restarts it, and checks that every
// write it acknowledged is there at the revision it acknowledged, and that the
// database is intact; then the same for `atrium mcp` killed mid-write. On both
// engines.
func TestReliabilityCrash(t *testing.T) {
	eachEngine(t, func(t *testing.T, e store.Engine, db string) {
		rounds := sized(2, 10)
		srv := startServe(t, db)
		token := srv.createToken(t, "crasher", "default", "writer")
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
		lost, writes := 0, 0
		for round := range rounds {
			if round > 0 {
				srv.restart(t)
			}
			acks := crashRound(t, srv, token, round, time.Duration(200+rng.IntN(1300))*time.Millisecond)
			writes += len(acks)
			checkIntact(t, srv, e)
			srv.restart(t)
			lost += verifyAcks(t, srv, acks)
			srv.kill(t) // the next round starts from a crash too
		}
		// A round that acknowledged nothing proves nothing.
		if writes < rounds*writersPerRound {
			t.Errorf("%d writes acknowledged over %d rounds: the writers did not get going before the kills", writes, rounds)
		}
		srv.restart(t)
		acks, sent := crashStdio(t, srv, rng.IntN(40)+5)
		lost += verifyAcks(t, srv, acks)
		srv.stop(t)
		checkIntact(t, srv, e)
		report(t, "crash/"+string(e), "kills_during_writes", rounds, "stdio_kills", 1, "acknowledged", writes+len(acks), "stdio_sent", sent, "lost", lost)
	})
}

const writersPerRound = 8

// crashAck is a write the server acknowledged.
type crashAck struct {
	path     string
	revision int64
	content  string
}

// crashRound runs writers over REST and MCP against srv and kills it with
// SIGKILL after delay; it returns the writes acknowledged before the kill.
func crashRound(t *testing.T, srv *server, token string, round int, delay time.Duration) []crashAck {
	t.Helper()
	const writers = writersPerRound
	var (
		mu   sync.Mutex
		acks []crashAck
		wg   sync.WaitGroup
	)
	stop := make(chan struct{})
	for w := range writers {
		var cs *mcp.ClientSession
		if w%2 == 1 {
			var err error
			if cs, err = tryConnectHTTP(srv.MCP(), token, ""); err != nil {
				t.Fatalf("connect: %v", err)
			}
		}
		wg.Go(func() {
			if cs != nil {
				defer cs.Close()
			}
			path := fmt.Sprintf("Crash/Writer %d.md", w)
			for j := 0; j < 2000; j++ {
				select {
				case <-stop:
					return
				default:
				}
				content := fmt.Sprintf("# Writer %d\n\nround %d, write %d, %s\n", w, round, j, strings.Repeat("durable ", j%50))
				var rev float64
				if cs == nil {
					status, b, err := do("PUT", srv.URL+"/api/pages/"+escapePath(path), token, mustJSON(map[string]any{"content": content, "overwrite": true}))
					if err != nil || status >= 300 {
						return // the server is gone: the kill came
					}
					rev, _ = jsonBody(b)["revision"].(float64)
				} else {
					m, code, err := mcpCaller{cs, "http"}.call("write_page", map[string]any{"path": path, "content": content, "overwrite": true})
					if err != nil || code != "" {
						return
					}
					rev, _ = m["revision"].(float64)
				}
				if rev <= 0 {
					t.Errorf("write to %s acknowledged without a revision", path)
					return
				}
				mu.Lock()
				acks = append(acks, crashAck{path, int64(rev), content})
				mu.Unlock()
			}
		})
	}
	time.Sleep(delay)
	srv.kill(t)
	close(stop)
	wg.Wait()
	return acks
}

// verifyAcks reads each acknowledged write back at its revision and returns
// how many are missing or different.
func verifyAcks(t *testing.T, srv *server, acks []crashAck) (lost int) {
	t.Helper()
	latest := map[string]int64{}
	for _, a := range acks {
		latest[a.path] = max(latest[a.path], a.revision)
		status, b, err := do("GET", fmt.Sprintf("%s/api/pages/%s?revision=%d", srv.URL, escapePath(a.path), a.revision), srv.AdminToken, "")
		got, _ := jsonBody(b)["content"].(string)
		if err != nil || status != http.StatusOK || got != a.content {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged revision %d of %s: %d %v %.200q, want %.200q", a.revision, a.path, status, err, got, a.content)
			}
		}
	}
	for p, rev := range latest {
		status, b, err := do("GET", srv.URL+"/api/pages/"+escapePath(p), srv.AdminToken, "")
		if got, _ := jsonBody(b)["revision"].(float64); err != nil || status != http.StatusOK || int64(got) < rev {
			lost++
			t.Errorf("%s is at revision %v after the restart; revision %d was acknowledged", p, got, rev)
		}
	}
	return lost
}

// openRaw opens the server's store as a plain database, beneath Atrium.
func openRaw(t *testing.T, srv *server, e store.Engine) *sql.DB {
	t.Helper()
	driver, dsn := "pgx", srv.DB
	if e == store.SQLite {
		driver, dsn = "sqlite", filepath.Join(srv.DataDir, "atrium.db")
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// checkIntact checks the stopped server's database: PRAGMA integrity_check
// and foreign keys on SQLite, and on both engines that every page's current
// revision is in its history with the same content.
func checkIntact(t *testing.T, srv *server, e store.Engine) {
	t.Helper()
	db := openRaw(t, srv, e)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if e == store.SQLite {
		var res string
		if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
			t.Fatalf("PRAGMA integrity_check after the crash: %q %v", res, err)
		}
		rows, err := db.QueryContext(ctx, "PRAGMA foreign_key_check")
		if err != nil {
			t.Fatal(err)
		}
		bad := rows.Next()
		rows.Close()
		if bad {
			t.Fatal("PRAGMA foreign_key_check after the crash found rows")
		}
	}
	var orphans int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM pages p WHERE NOT EXISTS
		(SELECT 1 FROM page_revisions r WHERE r.page_id = p.id AND r.revision = p.revision AND r.content_hash = p.content_hash)`).Scan(&orphans)
	if err != nil || orphans != 0 {
		t.Fatalf("pages whose current revision is missing from their history after the crash: %d %v", orphans, err)
	}
}

// crashStdio pipes write_page calls into `atrium mcp`, kills it with SIGKILL
// once it has acknowledged after of them, and returns the acknowledged
// writes and how many were sent.
func crashStdio(t *testing.T, srv *server, after int) ([]crashAck, int) {
	t.Helper()
	p := startMCP(t, srv, "crasher")
	cmd, stdin, stdout, stderr, done := p.cmd, p.stdin, p.stdout, p.stderr, p.done
	const sent = 300
	contents := map[float64]crashAck{}
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"crash","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= sent; i++ {
		a := crashAck{path: fmt.Sprintf("Crash/Stdio/%03d.md", i), content: fmt.Sprintf("# Stdio %d\n\nwritten before the kill\n", i)}
		contents[float64(i)] = a
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"write_page","arguments":{"path":%q,"content":%q}}}`+"\n", i, a.path, a.content)
	}
	go func() {
		io.WriteString(stdin, in.String())
	}()
	var acks []crashAck
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	lines := make(chan []byte)
	go func() {
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	timeout := time.After(2 * answerBound)
read:
	for len(acks) < after {
		select {
		case b, ok := <-lines:
			if !ok {
				break read
			}
			var m struct {
				ID     float64 `json:"id"`
				Result *struct {
					IsError           bool           `json:"isError"`
					StructuredContent map[string]any `json:"structuredContent"`
				} `json:"result"`
			}
			if json.Unmarshal(b, &m) != nil || m.ID == 0 || m.Result == nil || m.Result.IsError {
				continue
			}
			a := contents[m.ID]
			rev, _ := m.Result.StructuredContent["revision"].(float64)
			a.revision = int64(rev)
			acks = append(acks, a)
		case <-timeout:
			t.Errorf("atrium mcp acknowledged %d writes in %s, want %d\n%s", len(acks), 2*answerBound, after, stderr)
			break read
		}
	}
	cmd.Process.Kill()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("atrium mcp did not die on SIGKILL")
	}
	go func() {
		for range lines {
		}
	}()
	return acks, sent
}
