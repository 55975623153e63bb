// Package jsonerr says what is wrong with a JSON value in the terms of the
// API that received it: where, and what was expected, as a JSON type. The
// errors of encoding/json name Go types and struct fields ("Go struct field
// putBody.content of type string"), which mean nothing to a client and
// describe our code rather than the request.
package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"unicode"
)

// Describe says what is wrong in a value that did not decode: "invalid JSON
// at byte 12: …", "field content: expected a string, got a number", "unknown
// field "bogus"". It never names a Go type; an error it does not recognise and
// that reads like Go is reported as an invalid value.
func Describe(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, se.Error())
	case errors.As(err, &te):
		got := te.Value
		switch got {
		case "bool":
			got = "true or false"
		case "string", "number":
			got = "a " + got
		case "array", "object":
			got = "an " + got
		}
		field := jsonPath(te.Field)
		if field == "" {
			return fmt.Sprintf("expected %s, got %s", Kind(te.Type), got)
		}
		return fmt.Sprintf("field %s: expected %s, got %s", field, Kind(te.Type), got)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "invalid JSON: it ends before the value does"
	case errors.Is(err, io.EOF):
		return "no JSON value"
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if GoName.MatchString(msg) {
		return "invalid value"
	}
	return msg
}

// jsonPath is a field's path without the Go names of embedded structs,
// which encoding/json puts in it ("FieldsInput.title"): the API's JSON names
// are lower case, Go's embedded types are not.
func jsonPath(field string) string {
	var parts []string
	for _, p := range strings.Split(field, ".") {
		if p != "" && !unicode.IsUpper([]rune(p)[0]) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// Kind is the JSON type a Go type decodes from, with its article.
func Kind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value"
}

// GoName matches what Go leaks into error text: a qualified type
// (review.QuoteIn), the decoder's phrases, the SDK's internals. Tests use it
// to check that no answer carries one.
var GoName = regexp.MustCompile(`\b[a-z][a-z0-9]*\.[A-Z][A-Za-z0-9]+|Go struct|Go value|json: |jsonrpc2|wireDecode|\bunmarshal`)
