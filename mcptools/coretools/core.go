// Package coretools is the toolset that is always on: who you are and where.
package coretools

import (
	"context"
	"embed"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/services"
)

//go:embed defs/*.json
var defs embed.FS

// New is the core toolset: whoami.
func New(s *mcpserver.Server) *mcpserver.Toolset {
	return &mcpserver.Toolset{
		Name:        mcpserver.CoreToolset,
		Description: "Who you are and where: always on.",
		Default:     true,
		Tools:       []*mcpserver.Tool{whoamiTool(s)},
		Defs:        defs,
	}
}

// WhoamiInput takes nothing.
type WhoamiInput struct{}

// PrincipalInfo describes a principal to a caller.
type PrincipalInfo struct {
	Handle      string `json:"handle" jsonschema:"the principal's handle, e.g. dede"`
	Kind        string `json:"kind" jsonschema:"human or agent"`
	DisplayName string `json:"display_name" jsonschema:"the name shown to people"`
}

// WhoamiOutput is what whoami answers.
type WhoamiOutput struct {
	Principal       PrincipalInfo   `json:"principal" jsonschema:"who you act as"`
	Workspace       string          `json:"workspace" jsonschema:"the workspace every call of yours acts in"`
	Role            string          `json:"role" jsonschema:"your role in the workspace: reader, writer or admin"`
	Toolsets        []string        `json:"toolsets" jsonschema:"the toolsets this server has enabled"`
	ProtocolVersion string          `json:"protocol_version" jsonschema:"the MCP protocol version of this request"`
	ServerVersion   string          `json:"server_version" jsonschema:"the version of Atrium"`
	Local           *services.Where `json:"local,omitempty" jsonschema:"on a local server (atrium mcp, atrium call): the store and data folder it uses"`
}

func whoamiTool(s *mcpserver.Server) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "whoami",
		Title:       "Who am I",
		Description: "Returns who you act as (principal), in which workspace, with which role, which toolsets are enabled and the protocol version in use; a local server also says which store and data folder it uses. Call it first when unsure of your identity or permissions.",
		Annotations: mcpserver.Reads("Who am I"),
	}, atrium.RoleReader, func(ctx context.Context, req *mcp.CallToolRequest, _ WhoamiInput) (WhoamiOutput, error) {
		a := atrium.ActorFromContext(ctx)
		return WhoamiOutput{
			Principal:       PrincipalInfo{Handle: a.Principal.Handle, Kind: string(a.Principal.Kind), DisplayName: a.Principal.DisplayName},
			Workspace:       a.Workspace.Name,
			Role:            string(a.Role),
			Toolsets:        s.ToolsetNames(),
			ProtocolVersion: req.ProtocolVersion(),
			ServerVersion:   atrium.Version,
			Local:           s.Where(),
		}, nil
	})
}
