package mcpserver_test

// The registry's tests cover every toolset the binary can serve, the
// conformance fixtures included (the golden definitions, annotations and
// selection): they register themselves when linked in, as in cmd/atrium.
import _ "github.com/atrium-hq/atrium/mcpserver/conformance"
