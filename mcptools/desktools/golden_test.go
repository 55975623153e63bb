package desktools_test

import (
	"testing"

	"github.com/atrium-hq/atrium/mcpserver/mcptest"
	"github.com/atrium-hq/atrium/mcptools/desktools"
)

// Each tool's definition is a file in defs/: what tools/list sends, and what
// review shows of a change. Rewrite with -update.
func TestToolDefinitionsGolden(t *testing.T) { mcptest.Golden(t, desktools.New) }
