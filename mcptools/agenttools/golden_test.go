package agenttools_test

import (
	"testing"

	"github.com/atrium-hq/atrium/mcpserver/mcptest"
	"github.com/atrium-hq/atrium/mcptools/agenttools"
)

// Each tool's definition is a file in defs/: what tools/list sends, and what
// review shows of a change. Rewrite with -update.
func TestToolDefinitionsGolden(t *testing.T) { mcptest.Golden(t, agenttools.New(true)) }
