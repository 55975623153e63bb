package gateway

import (
	"regexp"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// destructiveName matches tool names that say they destroy something,
// whatever their annotations claim (004's rule).
var destructiveName = regexp.MustCompile(`(?i)delete|remove|destroy`)

// holdBack says why an upstream's tool is hidden, or "" if it is exposed.
// Destructive tools are hidden unless the server's metadata allows them:
// those that say destructiveHint true, those that are not read-only and say
// nothing (the spec's default for destructiveHint is true) and those whose
// names say delete, remove or destroy. A tool whose input schema Atrium
// could not re-expose is hidden whatever the policy.
func holdBack(t *mcp.Tool, allow bool) string {
	if !objectSchema(t.InputSchema) {
		return "its input schema is not a JSON object schema"
	}
	if allow {
		return ""
	}
	a := t.Annotations
	switch {
	case destructiveName.MatchString(t.Name):
		return "destructive: its name says delete, remove or destroy (allow with metadata.allowDestructiveTools)"
	case a != nil && a.DestructiveHint != nil && *a.DestructiveHint:
		return "destructive: destructiveHint is true (allow with metadata.allowDestructiveTools)"
	case (a == nil || !a.ReadOnlyHint) && (a == nil || a.DestructiveHint == nil):
		return "destructive: not read-only and no destructiveHint, which the spec takes as destructive (allow with metadata.allowDestructiveTools)"
	}
	return ""
}

// readOnly reports whether an upstream's tool says it changes nothing.
func readOnly(t *mcp.Tool) bool { return t.Annotations != nil && t.Annotations.ReadOnlyHint }

func objectSchema(s any) bool {
	m, ok := s.(map[string]any)
	return ok && m["type"] == "object"
}
