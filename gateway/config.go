package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
)

// ServerConfig is one upstream as the file declares it, before ${VAR}
// expansion. The fields are those of the mcpServers format used by Claude
// Desktop, Cursor and Claude Code (.mcp.json); unknown fields (alwaysAllow,
// autoApprove…) are ignored, so a file copied from a client loads as is.
type ServerConfig struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Type is Claude Code's transport name: stdio, http (Streamable HTTP) or
	// sse (legacy HTTP+SSE, with no attempt at Streamable HTTP first).
	Type     string `json:"type,omitempty"`
	Disabled bool   `json:"disabled,omitempty"`
	// InheritEnv gives the server Atrium's whole environment (less its
	// secrets) instead of the minimal one (see minimalEnv); nil: as the
	// file's top-level inheritEnv says, false by default.
	InheritEnv *bool    `json:"inheritEnv,omitempty"`
	Metadata   Metadata `json:"metadata"`
	Timeouts   Timeouts `json:"timeouts"`
	// Health are probes system_health_check runs besides ping and
	// tools/list: calls of the server's own tools that say whether what it
	// fronts is well (004's "how are my apps?": list the deployments, the
	// projects, the recent errors).
	Health []HealthProbe `json:"health,omitempty"`
	// OAuth names the client the gateway signs in to an HTTP server that
	// takes OAuth as: one registered with its authorization server
	// beforehand (its secret from ${VAR}), or the client's metadata
	// document. Otherwise it registers dynamically.
	OAuth *OAuthClientConfig `json:"oauth,omitempty"`
}

// OAuthClientConfig is a server's "oauth" entry.
type OAuthClientConfig struct {
	ClientID          string `json:"clientId,omitempty"`
	ClientSecret      string `json:"clientSecret,omitempty"`
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
}

// HealthProbe is a call of one of the server's tools, made by the health
// check. It passes when the tool answers in time and without isError; its
// answer's text is part of the evidence.
type HealthProbe struct {
	Tool      string         `json:"tool"`                // the tool's name on its server
	Arguments map[string]any `json:"arguments,omitempty"` // its arguments
}

// Metadata is the per-server policy of 004's external-mcps.json.
type Metadata struct {
	AllowDestructiveTools bool `json:"allowDestructiveTools,omitempty"`
}

// Timeouts bound each kind of exchange with an upstream. Zero means the
// default. They are separate on purpose: a health probe answers in seconds
// while a call may rightly take minutes, and a probe timeout as long as a
// call's would report a dead server as alive for minutes (and a call timeout
// as short as a probe's would fail honest work).
type Timeouts struct {
	Start  Duration `json:"start,omitzero"`  // connect and initialise (default 30 s)
	Call   Duration `json:"call,omitzero"`   // one proxied call (default 2 min)
	Health Duration `json:"health,omitzero"` // each health probe (default 5 s)
	// Slow is the probe latency above which the server counts as degraded
	// (default 1 s).
	Slow Duration `json:"slow,omitzero"`
}

const (
	defaultStart  = 30 * time.Second
	defaultCall   = 2 * time.Minute
	defaultHealth = 5 * time.Second
	defaultSlow   = time.Second
)

func or(d Duration, def time.Duration) time.Duration {
	if d > 0 {
		return time.Duration(d)
	}
	return def
}

// Duration is a time.Duration written as "30s" or as milliseconds.
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	var ms float64
	if err := json.Unmarshal(b, &ms); err == nil {
		*d = Duration(ms * float64(time.Millisecond))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`a duration is a string such as "30s" or a number of milliseconds`)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("%q is not a duration (use e.g. \"30s\")", s)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// File is a parsed gateway file: its servers by name.
type File struct {
	Path    string
	Servers map[string]*ServerConfig
}

// Names returns the server names in order.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Servers))
	for n := range f.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LoadFile reads and parses the gateway file at path.
func LoadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, atrium.Errorf(atrium.EInvalid, "gateway file: %v", err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, atrium.Errorf(atrium.EInvalid, "gateway file %s: %s", path, atrium.ErrorMessage(err))
	}
	f.Path = path
	return f, nil
}

// Parse reads the mcpServers format: {"mcpServers": {name: server}}, or the
// bare map {name: server} of 004's external-mcps.json. An error names the
// line (and column) where the file stops making sense.
func Parse(b []byte) (*File, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, atrium.Errorf(atrium.EInvalid, "%s", describeJSON(b, 0, err))
	}
	servers := top
	var inherit bool
	if raw, ok := top["mcpServers"]; ok {
		servers = nil
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, atrium.Errorf(atrium.EInvalid, "mcpServers must be an object of servers by name (%s)", where(b, raw))
		}
		if raw, ok := top["inheritEnv"]; ok {
			if err := json.Unmarshal(raw, &inherit); err != nil {
				return nil, atrium.Errorf(atrium.EInvalid, "inheritEnv is true or false (%s)", where(b, raw))
			}
		}
	}
	f := &File{Servers: map[string]*ServerConfig{}}
	for name, raw := range servers {
		sc := &ServerConfig{}
		if err := json.Unmarshal(raw, sc); err != nil {
			return nil, atrium.Errorf(atrium.EInvalid, "server %q (%s): %s", name, where(b, raw), describeJSON(b, int64(max(bytes.Index(b, raw), 0)), err))
		}
		if err := sc.check(); err != nil {
			return nil, atrium.Errorf(atrium.EInvalid, "server %q (%s): %v", name, where(b, raw), err)
		}
		if !validServerName(name) {
			return nil, atrium.Errorf(atrium.EInvalid, "server %q (%s): a server's name becomes its tools' prefix, so it may hold only letters, digits, _ and - (at most 32)", name, where(b, raw))
		}
		if sc.InheritEnv == nil {
			sc.InheritEnv = &inherit
		}
		f.Servers[name] = sc
	}
	return f, nil
}

func (sc *ServerConfig) check() error {
	switch {
	case sc.Command == "" && sc.URL == "":
		return errors.New(`give "command" (a program to start) or "url" (a Streamable HTTP or SSE endpoint)`)
	case sc.Command != "" && sc.URL != "":
		return errors.New(`give "command" or "url", not both`)
	}
	switch sc.Type {
	case "", "stdio", "http", "streamable-http", "sse":
	default:
		return fmt.Errorf("type %q: use stdio, http or sse", sc.Type)
	}
	for i, p := range sc.Health {
		if p.Tool == "" {
			return fmt.Errorf("health[%d]: name the tool to call, as the server names it (\"tool\": \"list_projects\")", i)
		}
	}
	return nil
}

func validServerName(n string) bool {
	if n == "" || len(n) > 32 {
		return false
	}
	for _, c := range n {
		if !nameChar(c) {
			return false
		}
	}
	return true
}

// describeJSON says what is wrong with the JSON at b[base:] and on which
// line of b.
func describeJSON(b []byte, base int64, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn) && strings.Contains(syn.Error(), "unexpected end"):
		line, _ := lineCol(b, int64(len(b)))
		return fmt.Sprintf("invalid JSON: the file ends early, at line %d (a missing } or ]?)", line)
	case errors.As(err, &syn):
		line, col := lineCol(b, base+syn.Offset)
		return fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, syn)
	case errors.As(err, &typ):
		line, col := lineCol(b, base+typ.Offset)
		field := typ.Field
		if field == "" {
			field = "value"
		}
		return fmt.Sprintf("line %d, column %d: %s must be %s, not %s", line, col, field, typ.Type, typ.Value)
	}
	return err.Error()
}

// where is the line of raw, a slice of b, for error messages.
func where(b, raw []byte) string {
	i := bytes.Index(b, raw)
	if i < 0 {
		return "line ?"
	}
	line, _ := lineCol(b, int64(i)+1)
	return fmt.Sprintf("line %d", line)
}

func lineCol(b []byte, off int64) (line, col int) {
	off = min(max(off, 1), int64(len(b)))
	before := b[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n') - 1
	return line, col
}
