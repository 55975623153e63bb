package atrium

import (
	"regexp"
	"strings"
	"testing"
)

// The rule as it reads in ValidateName's doc: validName must agree with it.
var nameRule = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"", "a", "default", "a.b_c-d", "-a", ".a", "_a", "A", "ab C", "é", "a\n", "a/b",
		strings.Repeat("a", 63), strings.Repeat("a", 64), "0", "9-", "a..", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validName(s), nameRule.MatchString(s); got != want {
			t.Fatalf("validName(%q) = %v, the rule says %v", s, got, want)
		}
		if err := ValidateName("handle", s); (err == nil) != nameRule.MatchString(s) || (err != nil && ErrorCode(err) != EInvalid) {
			t.Fatalf("ValidateName(%q) = %v", s, err)
		}
	})
}
