package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxName is the longest name Atrium exposes: clients (Claude, OpenAI's) cap
// tool names at 64 characters even though MCP allows 128.
const MaxName = 64

func nameChar(c rune) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// exposedName is the name an upstream's tool (or prompt) is exposed under:
// <server>_<tool>, with every character outside [A-Za-z0-9_-] made _, since
// clients check names against that pattern (docker's server:tool names break
// them). A name over MaxName is cut and ends with a hash of the whole, so
// that it stays the same from run to run and two long names that share a
// beginning still differ.
func exposedName(server, tool string) string {
	full := server + "_" + tool
	var b strings.Builder
	for _, c := range full {
		if nameChar(c) {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	n := b.String()
	if len(n) <= MaxName {
		return n
	}
	sum := sha256.Sum256([]byte(full))
	h := hex.EncodeToString(sum[:4])
	return n[:MaxName-len(h)-1] + "_" + h
}
