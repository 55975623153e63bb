//go:build !unix

package pagetools

// openNonBlock: elsewhere, opening does not block on special files.
const openNonBlock = 0
