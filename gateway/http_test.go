package gateway

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
)

// startHTTPUpstream runs testupstream serving Streamable HTTP (and legacy
// SSE at /sse) and returns its base URL; the test ends it.
func (h *harness) startHTTPUpstream() string {
	h.t.Helper()
	cmd := exec.Command(upstreamBin)
	cmd.Env = []string{"TESTUP_HTTP=127.0.0.1:0", h.mark}
	out, err := cmd.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.TrimSuffix(strings.TrimSpace(line), "/mcp")
}

func TestHTTPUpstreams(t *testing.T) {
	h := newHarness(t)
	base := h.startHTTPUpstream()
	h.env["GW_TOKEN"] = "tok-0123456789"
	h.start(map[string]any{
		"web":      map[string]any{"url": base + "/mcp", "headers": map[string]string{"Authorization": "Bearer ${GW_TOKEN}"}},
		"legacy":   map[string]any{"url": base + "/sse", "type": "sse"},
		"fallback": map[string]any{"url": base + "/sse"},
	})
	for name, transport := range map[string]string{"web": "http", "legacy": "sse", "fallback": "sse"} {
		st := h.status(name)
		if st.State != Ready || st.Transport != transport {
			t.Errorf("%s: %s over %q (%s), want ready over %s", name, st.State, st.Transport, st.LastError, transport)
			continue
		}
		if txt, err := h.call(name+"_echo", map[string]string{"text": name}); err != nil || txt != name {
			t.Errorf("%s_echo: %q, %v", name, txt, err)
		}
	}
	if txt, _ := h.call("web_header", map[string]string{"name": "Authorization"}); txt != "Bearer tok-0123456789" {
		t.Errorf("the configured header did not arrive: %q", txt)
	}
	if st := h.status("web"); strings.Contains(strings.Join(st.HeaderKeys, ","), "tok-") || !strings.Contains(strings.Join(st.HeaderKeys, ","), "Authorization") {
		t.Errorf("header keys %v", st.HeaderKeys)
	}

	// The server forgets every session, as a restarted one would: the next
	// calls re-initialise and go through.
	if _, err := h.call("web_drop_sessions", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a call after the session was lost to succeed", func() bool {
		txt, err := h.call("web_echo", map[string]string{"text": "again"})
		return err == nil && txt == "again"
	})
	waitFor(t, "the session loss to be counted", func() bool { return h.status("web").Restarts >= 1 })
}
