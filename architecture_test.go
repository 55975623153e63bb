package atrium_test

import (
	"os"
	"regexp"
	"testing"
)

// Every package and file ARCHITECTURE.md names exists: the map a newcomer
// reads first must not send them to a room that is gone.
func TestArchitectureNamesWhatExists(t *testing.T) {
	b, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	paths := regexp.MustCompile("`((?:cmd|embed|mcptools|mcpserver|services|api|web|store|pages|review|tasks|identity|activity|gateway|mirror|markdown|search|vault|records|httpserve|authn|oauth|oauthhttp|oauthclient|oidc|skills|trackers|webhooks)(?:/[a-z0-9_.]+)*)`")
	n := 0
	for _, m := range paths.FindAllStringSubmatch(string(b), -1) {
		n++
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("ARCHITECTURE.md names %s: %v", m[1], err)
		}
	}
	if n < 20 {
		t.Errorf("found %d paths in ARCHITECTURE.md; the pattern no longer reads it", n)
	}
}
