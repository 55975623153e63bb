package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// environOf is the environment of the server's process, as the kernel holds
// it (/proc/PID/environ), by name.
func (h *harness) environOf(name string) map[string]string {
	h.t.Helper()
	txt, err := h.call(name+"_pid", map[string]any{})
	if err != nil {
		h.t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("/proc", strings.Fields(txt)[0], "environ"))
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]string{}
	for kv := range strings.SplitSeq(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// An upstream gets a minimal environment — PATH, HOME, the locale, temp
// folders, who and where it runs — and its declared env, not Atrium's whole
// environment: a key set for one server is not visible to the others. A
// server, or the whole file, may opt in to inheriting (inheritEnv).
func TestUpstreamsGetAMinimalEnvironment(t *testing.T) {
	atrium := map[string]string{"PATH": os.Getenv("PATH"), "HOME": "/home/atrium", "LANG": "C.UTF-8", "LC_TIME": "en_GB.UTF-8",
		"TMPDIR": "/tmp/atrium", "USER": "atrium", "LOGNAME": "atrium", "SHELL": "/bin/sh", "TERM": "dumb",
		"GITHUB_TOKEN": "ghp_for_github_only", "ATRIUM_TOKEN": "atr_secret"}
	minimal := []string{"PATH", "HOME", "LANG", "LC_TIME", "TMPDIR", "USER", "LOGNAME", "SHELL", "TERM"}
	check := func(t *testing.T, h *harness, name string, inherits bool, declared map[string]string) {
		t.Helper()
		env := h.environOf(name)
		for _, k := range minimal {
			if env[k] != atrium[k] {
				t.Errorf("%s: %s=%q, want %q", name, k, env[k], atrium[k])
			}
		}
		for k, v := range declared {
			if env[k] != v {
				t.Errorf("%s: declared %s=%q, got %q", name, k, v, env[k])
			}
		}
		if _, ok := env["ATRIUM_TOKEN"]; ok {
			t.Errorf("%s sees ATRIUM_TOKEN", name)
		}
		if _, ok := env["GITHUB_TOKEN"]; ok != inherits && declared["GITHUB_TOKEN"] == "" {
			t.Errorf("%s: GITHUB_TOKEN visible %v, want %v (inheritEnv %v)", name, ok, inherits, inherits)
		}
	}
	t.Run("per server", func(t *testing.T) {
		h := newHarness(t)
		for k, v := range atrium {
			h.env[k] = v
		}
		github := h.server(map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"})
		other := h.server(map[string]string{"MINE": "declared"})
		inherit := h.server(nil)
		inherit["inheritEnv"] = true
		h.start(map[string]any{"github": github, "other": other, "inherit": inherit})
		check(t, h, "github", false, map[string]string{"GITHUB_TOKEN": "ghp_for_github_only"})
		check(t, h, "other", false, map[string]string{"MINE": "declared"})
		check(t, h, "inherit", true, nil)
	})
	t.Run("for the file", func(t *testing.T) {
		h := newHarness(t)
		for k, v := range atrium {
			h.env[k] = v
		}
		h.top = map[string]any{"inheritEnv": true}
		apart := h.server(nil)
		apart["inheritEnv"] = false
		h.start(map[string]any{"all": h.server(nil), "apart": apart})
		check(t, h, "all", true, nil)
		check(t, h, "apart", false, nil)
	})
}
