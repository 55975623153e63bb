package gateway

import (
	"net/url"
	"sort"
	"strings"
)

// A redactor removes a server's secrets from text Atrium shows: its stderr,
// its errors, its command line. The secrets are the values of its env and
// headers, of its URL's credentials and query, and every value ${VAR}
// brought in from Atrium's environment: any of them may hold a key, and an
// upstream that prints its own configuration (many do, on a failed start)
// must not put it in get_status.
type redactor struct{ secrets []string }

// minSecret is the shortest value treated as a secret: replacing "1" or
// "true" everywhere would garble the text and protect nothing.
const minSecret = 6

const redacted = "[redacted]"

func newRedactor(sp *Spec, substituted []string) *redactor {
	r := &redactor{}
	add := func(v string) {
		if len(v) >= minSecret {
			r.secrets = append(r.secrets, v)
		}
	}
	for _, v := range sp.Env {
		add(v)
	}
	add(sp.OAuth.ClientSecret)
	for _, v := range substituted {
		add(v)
	}
	for _, v := range sp.Headers {
		add(v)
		if _, tok, ok := strings.Cut(v, " "); ok { // "Bearer <token>"
			add(tok)
		}
	}
	if u, err := url.Parse(sp.URL); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				add(v)
			}
		}
	}
	// Longest first, so that a secret containing another is removed whole.
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

func (r *redactor) apply(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, redacted)
		}
	}
	return s
}

// redactURL is u without its credentials and query values.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redacted
	}
	if u.User != nil {
		u.User = url.User(redacted)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"x"}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}
