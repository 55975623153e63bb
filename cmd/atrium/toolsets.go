package main

// Toolsets defined outside mcpserver register themselves when linked in: the
// conformance fixtures, served only when named (--toolsets all,conformance)
// so that the official conformance suite can grade the real binary.
import _ "github.com/atrium-hq/atrium/mcpserver/conformance"
