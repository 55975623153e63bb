package main

import "testing"

func TestLocalHandle(t *testing.T) {
	t.Setenv("ATRIUM_AGENT", "claude")
	if h := localHandle(); h != "claude" {
		t.Errorf("with ATRIUM_AGENT: %q", h)
	}
	t.Setenv("ATRIUM_AGENT", "")
	t.Setenv("USER", "Jane Doe")
	if h := localHandle(); h == "" || h != sanitizedOrUser(h) {
		t.Errorf("from the OS user: %q", h)
	}
}

func sanitizedOrUser(h string) string {
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return ""
		}
	}
	return h
}
