package atrium

import (
	"errors"
	"fmt"
)

// Error codes, shared by every surface: MCP tool results carry them as "code",
// REST maps them to HTTP statuses.
const (
	EInvalid          = "invalid_argument"
	ENotFound         = "not_found"
	EConflict         = "conflict"
	EPermission       = "permission_denied"
	EUnauthenticated  = "unauthenticated"
	ETooLarge         = "too_large"
	EUnavailable      = "unavailable"
	EInternal         = "internal"
	internalErrorText = "internal error"
)

// Error is an error meant for the caller: its Message is safe to show and
// written so that a person or a model can act on it. Any other error is internal,
// and its text stays in the logs.
type Error struct {
	Code    string
	Message string
	// Details carries structured facts about the failure, such as both
	// revisions of a conflict.
	Details map[string]any
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithDetails returns e with details added.
func (e *Error) WithDetails(kv map[string]any) *Error {
	e.Details = kv
	return e
}

// ErrorCode returns the code of err, EInternal for errors that are not *Error,
// and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the message of err that may be shown to a caller: an
// *Error's message, or a generic text for anything else.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return internalErrorText
}

// ErrorDetails returns the details of an *Error, or nil.
func ErrorDetails(err error) map[string]any {
	var e *Error
	if errors.As(err, &e) {
		return e.Details
	}
	return nil
}
