//go:build unix

package mcpserver

import "syscall"

// openNonBlock keeps opening a FIFO with no writer from blocking.
const openNonBlock = syscall.O_NONBLOCK
