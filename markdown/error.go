package markdown

import "fmt"

// Error codes.
const (
	// EInvalid: the input is malformed (bad YAML, bad value, bad edit).
	EInvalid = "invalid"
	// ENotFound: a section path matches no heading.
	ENotFound = "not_found"
	// EAmbiguous: a section path matches several headings.
	EAmbiguous = "ambiguous"
)

// Error is a failure caused by the input. Message is safe to show to the caller
// and says what to change.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
