// Package search tokenizes page text, parses search queries and ranks pages,
// so that SQLite and PostgreSQL return the same results in the same order.
//
// The database engines only narrow pages down to candidates by tokens (see
// [Query.Retrieval]); everything that decides what a token is, whether a page
// really matches and how well, lives here and runs in Go. The package is pure:
// no I/O, no global state that changes, and no map iteration that could make
// two runs over the same input differ.
package search

// Error is a problem with a query that the person or agent who wrote it can
// fix; its Message says how.
type Error struct {
	Message string
}

func (e *Error) Error() string { return e.Message }
