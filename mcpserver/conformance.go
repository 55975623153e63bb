package mcpserver

// conformanceToolset holds the fixtures of the official MCP conformance suite.
// It is off unless named: --toolsets all,conformance.
func conformanceToolset(s *Server) *Toolset {
	return &Toolset{Name: "conformance", Description: "Fixtures of the official MCP conformance suite; for testing only."}
}
