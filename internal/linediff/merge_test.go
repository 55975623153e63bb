package linediff_test

import (
	"testing"

	"github.com/atrium-hq/atrium/internal/linediff"
)

// Issue 23.4: two writers' changes on one base merge when they touch
// different lines; a true overlap is a conflict.
func TestMerge(t *testing.T) {
	const base = "# Notes\n\none\ntwo\nthree\nfour\n"
	for _, c := range []struct {
		name, mine, theirs, want string
		ok                       bool
	}{
		{"different lines", "# Notes\n\nONE\ntwo\nthree\nfour\n", "# Notes\n\none\ntwo\nthree\nFOUR\n", "# Notes\n\nONE\ntwo\nthree\nFOUR\n", true},
		{"adjacent lines", "# Notes\n\none\nTWO\nthree\nfour\n", "# Notes\n\none\ntwo\nTHREE\nfour\n", "# Notes\n\none\nTWO\nTHREE\nfour\n", true},
		{"added at both ends", "# Notes\n\none\ntwo\nthree\nfour\nfive\n", "# Title\n# Notes\n\none\ntwo\nthree\nfour\n", "# Title\n# Notes\n\none\ntwo\nthree\nfour\nfive\n", true},
		{"the same change twice", "# Notes\n\nONE\ntwo\nthree\nfour\n", "# Notes\n\nONE\ntwo\nthree\nfour\n", "# Notes\n\nONE\ntwo\nthree\nfour\n", true},
		{"one side removes", "# Notes\n\none\nthree\nfour\n", "# Notes\n\none\ntwo\nthree\nfour\nfive\n", "# Notes\n\none\nthree\nfour\nfive\n", true},
		{"no trailing newline", "# Notes\n\none\ntwo\nthree\nfour", "# Notes\n\nONE\ntwo\nthree\nfour\n", "# Notes\n\nONE\ntwo\nthree\nfour", true},
		{"the same line", "# Notes\n\none\nmine\nthree\nfour\n", "# Notes\n\none\ntheirs\nthree\nfour\n", "", false},
		{"inserted at the same place", "# Notes\n\none\nmine\ntwo\nthree\nfour\n", "# Notes\n\none\ntheirs\ntwo\nthree\nfour\n", "", false},
		{"removed and changed", "# Notes\n\none\nfour\n", "# Notes\n\none\ntwo\nTHREE\nfour\n", "", false},
	} {
		got, ok := linediff.Merge(base, c.mine, c.theirs)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s: merged %v %q, want %v %q", c.name, ok, got, c.ok, c.want)
		}
	}
}
