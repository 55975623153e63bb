package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// The standing reliability suite: tests named TestReliability… run a fast
// variant in `make test` and a fuller one under `make reliability`
// (ATRIUM_RELIABILITY=full), and report their figures as RELIABILITY lines
// that the make target gathers into a summary.

// raceBuild is set when the tests are built with -race.
var raceBuild bool

// reliabilityFull reports whether the fuller variants run.
func reliabilityFull() bool { return os.Getenv("ATRIUM_RELIABILITY") == "full" }

// sized is fast in the default variant, full in the fuller one.
func sized(fast, full int) int {
	if reliabilityFull() {
		return full
	}
	return fast
}

// report logs one line of figures for the summary of `make reliability`.
func report(t testing.TB, name string, kv ...any) {
	t.Helper()
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%v=%v", kv[i], kv[i+1])
	}
	t.Logf("RELIABILITY %s: %s", name, b.String())
}

// eachEngine runs fn on SQLite (a file in the data folder: db "") and on a
// fresh PostgreSQL schema.
func eachEngine(t *testing.T, fn func(t *testing.T, e store.Engine, db string)) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := ""
		if e == store.Postgres {
			db = storetest.PostgresDSN(t)
		}
		fn(t, e, db)
	})
}

// answerBound is how long any one request may take before it counts as not
// answered: generous, so that only a hang fails it on a loaded machine.
const answerBound = 30 * time.Second

// do sends one HTTP request within answerBound and returns its status and
// body; err is set when there was no answer.
func do(method, url, token, body string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), answerBound)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// jsonBody decodes an answer's JSON object.
func jsonBody(b []byte) map[string]any {
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// createToken makes a token for handle in workspace with role.
func (s *server) createToken(t testing.TB, handle, workspace, role string) string {
	t.Helper()
	args := []string{"token", "create", "--principal", handle, "--role", role}
	if workspace != "" {
		args = append(args, "--workspace", workspace)
	}
	out, errOut, code := s.cli(t, nil, args...)
	if code != 0 {
		t.Fatalf("token create %s: exit %d\n%s", handle, code, errOut)
	}
	return strings.TrimSpace(out)
}
