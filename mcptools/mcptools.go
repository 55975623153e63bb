// Package mcptools lists Atrium's MCP toolsets, each a package of its own
// beside this file, in the order their tools are listed. The registry
// (mcpserver) knows none of them: cmd/atrium hands it this list.
//
// Adding a toolset is one folder here and one line in All.
package mcptools

import (
	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/mcptools/agenttools"
	"github.com/atrium-hq/atrium/mcptools/conformance"
	"github.com/atrium-hq/atrium/mcptools/coretools"
	"github.com/atrium-hq/atrium/mcptools/desktools"
	"github.com/atrium-hq/atrium/mcptools/gatewaytools"
	"github.com/atrium-hq/atrium/mcptools/pagetools"
	"github.com/atrium-hq/atrium/mcptools/reviewtools"
	"github.com/atrium-hq/atrium/mcptools/skilltools"
	"github.com/atrium-hq/atrium/mcptools/tasktools"
)

// Options say what the server around the toolsets has.
type Options struct {
	// Gateway is the gateway, nil when no gateway file is configured.
	Gateway *gateway.Gateway
	// RunsAgents is set on a server that runs agent sessions (atrium serve).
	RunsAgents bool
	// SkillsFolder is the workspace folder skills are authored in: empty
	// for the default (Skills), "-" for none.
	SkillsFolder string
}

// All are every toolset Atrium can serve.
func All(o Options) []mcpserver.NewToolset {
	return []mcpserver.NewToolset{
		coretools.New,
		skilltools.New(skilltools.Options{Folder: o.SkillsFolder}),
		pagetools.New,
		reviewtools.New,
		tasktools.New,
		desktools.New,
		agenttools.New(o.RunsAgents),
		gatewaytools.New(o.Gateway),
		conformance.New, // off unless named: --toolsets all,conformance
	}
}
