//go:build unix

package pagetools

import "syscall"

// openNonBlock keeps opening a FIFO with no writer from blocking.
const openNonBlock = syscall.O_NONBLOCK
