package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium/gateway"
)

// gatewayFlag is --gateway: a file of other MCP servers to put behind Atrium.
type gatewayFlag struct{ file string }

func (f *gatewayFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.file, "gateway", os.Getenv("ATRIUM_GATEWAY"), "start the MCP servers of this file (the mcpServers JSON of Claude Desktop, Cursor or .mcp.json) and expose their tools as <server>_<tool> (env ATRIUM_GATEWAY)")
}

// start starts the gateway, if a file was given. Its servers start in the
// background; the caller closes it, which ends every process it started.
func (f *gatewayFlag) start(log *slog.Logger) (*gateway.Gateway, error) {
	if f.file == "" {
		return nil, nil
	}
	return gateway.Start(f.file, gateway.Options{Logger: log})
}
