package gateway

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// expand substitutes ${VAR}, ${VAR:-default} and ${VAR:?message} in s from
// lookup. A variable that is unset (or empty, for :- and :?) with no default
// is an error naming it: a server started with the literal text "${KEY}" as
// its API key would fail later, and far less clearly. A $ not followed by {
// is kept as is, and $${ is a literal ${.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("%q has a ${ with no closing }", truncate(s[i:], 20))
		}
		expr := s[i+2 : i+end]
		i += end + 1
		name, op, arg := expr, "", ""
		if j := strings.Index(expr, ":"); j >= 0 {
			name, op, arg = expr[:j], expr[j:min(j+2, len(expr))], expr[min(j+2, len(expr)):]
		}
		if !validVarName(name) {
			return "", fmt.Errorf("${%s}: %q is not a variable name", truncate(expr, 40), name)
		}
		v, ok := lookup(name)
		switch op {
		case "":
			if !ok {
				return "", fmt.Errorf("environment variable %s is not set (write ${%s:-default} to give a default)", name, name)
			}
		case ":-":
			if v == "" {
				v = arg
			}
		case ":?":
			if v == "" {
				msg := arg
				if msg == "" {
					msg = "it is required"
				}
				return "", fmt.Errorf("environment variable %s is not set: %s", name, msg)
			}
		default:
			return "", fmt.Errorf("${%s}: use ${%s}, ${%s:-default} or ${%s:?message}", truncate(expr, 40), name, name, name)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

func validVarName(n string) bool {
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		return false
	}
	for _, c := range n {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Spec is a server's configuration with every variable expanded: what the
// supervisor starts. It holds secrets; only Describe's output may be shown.
type Spec struct {
	Name      string
	Transport string // stdio, http or sse
	Command   string
	Args      []string
	Env       map[string]string // the server's own env, added to the process environment
	Inherit   bool              // inheritEnv: the process environment is Atrium's, not the minimal one
	Cwd       string
	URL       string
	Headers   map[string]string
	Allow     bool // metadata.allowDestructiveTools
	Timeouts  Timeouts
	Health    []HealthProbe
	// OAuth is the client the gateway signs in as (see ServerConfig.OAuth),
	// its values expanded; zero: dynamic registration.
	OAuth  OAuthClientConfig
	redact *redactor
}

// Resolve expands sc's variables from lookup. The error names the variable
// and the field it is in, never a value.
func Resolve(name string, sc *ServerConfig, lookup func(string) (string, bool)) (*Spec, error) {
	sp := &Spec{Name: name, Cwd: sc.Cwd, Allow: sc.Metadata.AllowDestructiveTools, Timeouts: sc.Timeouts, Health: sc.Health,
		Inherit: sc.InheritEnv != nil && *sc.InheritEnv}
	// Every value taken from the environment counts as a secret, wherever
	// it lands: an API key may as well be an argument (--api-key=${KEY}) as
	// an env entry, and Atrium cannot tell a key from a path.
	var substituted []string
	recorded := func(k string) (string, bool) {
		v, ok := lookup(k)
		if ok {
			substituted = append(substituted, v)
		}
		return v, ok
	}
	var err error
	field := func(where, s string) string {
		if err != nil {
			return ""
		}
		v, e := expand(s, recorded)
		if e != nil {
			err = fmt.Errorf("%s: %v", where, e)
		}
		return v
	}
	sp.Command = field("command", sc.Command)
	for i, a := range sc.Args {
		sp.Args = append(sp.Args, field(fmt.Sprintf("args[%d]", i), a))
	}
	sp.Cwd = field("cwd", sc.Cwd)
	sp.URL = field("url", sc.URL)
	if len(sc.Env) > 0 {
		sp.Env = map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
			sp.Env[k] = field("env."+k, sc.Env[k])
		}
	}
	if len(sc.Headers) > 0 {
		sp.Headers = map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(sc.Headers)) {
			sp.Headers[k] = field("headers."+k, sc.Headers[k])
		}
	}
	if o := sc.OAuth; o != nil {
		sp.OAuth = OAuthClientConfig{ClientID: field("oauth.clientId", o.ClientID), ClientSecret: field("oauth.clientSecret", o.ClientSecret),
			ClientMetadataURL: field("oauth.clientMetadataUrl", o.ClientMetadataURL)}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case sc.URL == "":
		sp.Transport = "stdio"
	case sc.Type == "sse":
		sp.Transport = "sse"
	default:
		sp.Transport = "http"
	}
	sp.redact = newRedactor(sp, substituted)
	return sp, nil
}

// secretEnv are Atrium's own secrets, never passed to an upstream process:
// its token, and the database URL that may carry a password. A server's env
// may still set them explicitly (a second Atrium as an upstream needs its
// own token).
var secretEnv = []string{"ATRIUM_TOKEN", "ATRIUM_DB"}

// minimalEnv are the variables of Atrium's environment every stdio server
// gets: where programs are, whose home, the locale (LC_* too), temp
// folders, who runs it, the shell and terminal. Anything else — an API key
// meant for one server — reaches a server only through its own env
// ("GITHUB_TOKEN": "${GITHUB_TOKEN}"), or with inheritEnv.
var minimalEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TMP", "TEMP"}

func inMinimalEnv(k string) bool {
	return slices.Contains(minimalEnv, k) || strings.HasPrefix(k, "LC_")
}

// environ is the process environment of a stdio server: the minimal part of
// base (all of it with inheritEnv) without Atrium's secrets, with the
// server's env added (and winning).
func (sp *Spec) environ(base []string) []string {
	out := make([]string, 0, len(base)+len(sp.Env))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(secretEnv, k) || !sp.Inherit && !inMinimalEnv(k) {
			continue
		}
		if _, mine := sp.Env[k]; mine {
			continue
		}
		out = append(out, kv)
	}
	keys := make([]string, 0, len(sp.Env))
	for k := range sp.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+sp.Env[k])
	}
	return out
}

// Describe is how the server starts, with every value that may be a secret
// replaced: env and header values, URL credentials and query values.
func (sp *Spec) Describe() string {
	if sp.Transport == "stdio" {
		return sp.redact.apply(strings.Join(append([]string{sp.Command}, sp.Args...), " "))
	}
	return redactURL(sp.URL)
}
