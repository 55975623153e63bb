//go:build !unix

package mcpserver

// openNonBlock: elsewhere, opening does not block on special files.
const openNonBlock = 0
