package mcpserver

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/atrium-hq/atrium/internal/jsonerr"
)

// portable rewrites the schemas inferred from Go types so that clients which
// map tool schemas onto a one-type dialect (Gemini's OpenAPI subset, say)
// accept them: jsonschema-go types slices and pointers as ["null", T], and
// Atrium never sends null for them (outputs go through emptySlices; inputs
// that may be absent are optional instead). It changes s in place.
func portable(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	if len(s.Types) == 2 && (s.Types[0] == "null" || s.Types[1] == "null") {
		t := s.Types[0]
		if t == "null" {
			t = s.Types[1]
		}
		s.Type, s.Types = t, nil
	}
	for _, p := range s.Properties {
		portable(p)
	}
	for _, d := range s.Defs {
		portable(d)
	}
	portable(s.Items)
	portable(s.AdditionalProperties)
	for _, sub := range s.AnyOf {
		portable(sub)
	}
	for _, sub := range s.OneOf {
		portable(sub)
	}
	for _, sub := range s.AllOf {
		portable(sub)
	}
	return s
}

// emptySlices replaces every nil slice reachable from v (through structs,
// pointers and slices) with an empty one, so that lists are [] on the wire and
// match their schemas.
func emptySlices(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			emptySlices(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				emptySlices(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			if v.CanSet() {
				v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			}
			return
		}
		for i := range v.Len() {
			emptySlices(v.Index(i))
		}
	}
}

// describeInvalid says why arguments failed their tool's input schema, in
// the arguments' terms: `field quote.exact: expected a string, got an
// integer`, `missing required field "content"`, `unknown field "bogus"`.
// The validator's own text walks schema locations (/$defs/…, named after Go
// types) and can print Go values with their types.
func describeInvalid(err error) string {
	msg, field := err.Error(), ""
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		loc, tail, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		field = fieldAt(field, loc)
		msg = tail
	}
	keyword, detail, _ := strings.Cut(msg, ": ")
	var what string
	switch {
	case keyword == "type" && schemaTypeRE.MatchString(detail):
		m := schemaTypeRE.FindStringSubmatch(detail)
		what = fmt.Sprintf("expected %s, got %s", article(m[2]), article(m[1]))
	case keyword == "required":
		missing := strings.TrimPrefix(detail, "missing properties: ")
		return joinField(field, "missing required "+plural(missing, "field"))
	case strings.HasPrefix(msg, "unexpected additional properties "):
		unknown := strings.TrimPrefix(msg, "unexpected additional properties ")
		return joinField(field, "unknown "+plural(unknown, "field"))
	case keyword == "enum":
		_, allowed, _ := strings.Cut(detail, "does not equal any of: ")
		what = "must be one of " + allowed
	case keyword == "anyOf" || keyword == "oneOf":
		what = "does not match any of the forms it may take"
	case jsonerr.GoName.MatchString(msg) || strings.Contains(msg, " of type "):
		what = "invalid value"
	default:
		what = msg
	}
	if field == "" {
		return "the arguments: " + what
	}
	return "field " + field + ": " + what
}

var schemaTypeRE = regexp.MustCompile(`has type "([a-z]+)", want "([a-z]+)"`)

// fieldAt is the argument a schema location is about, given the one its
// parent was about: /properties/a/items/properties/b is a[].b, and a
// location inside /$defs/T continues from the field that referred to T.
func fieldAt(field, loc string) string {
	parts := strings.Split(loc, "/")
	if len(parts) > 2 && parts[1] == "$defs" {
		parts = parts[3:]
	} else if len(parts) > 1 && parts[0] == "" {
		parts, field = parts[1:], ""
	} else {
		return field // "root", an $id
	}
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties":
			if i+1 < len(parts) {
				i++
				if field != "" {
					field += "."
				}
				field += parts[i]
			}
		case "items":
			field += "[]"
		}
	}
	return field
}

func joinField(field, what string) string {
	if field == "" {
		return what
	}
	return "field " + field + ": " + what
}

// plural turns the validator's ["a" "b"] into field "a", or fields "a", "b".
func plural(list, noun string) string {
	names := strings.Fields(strings.Trim(list, "[]"))
	if len(names) == 1 {
		return noun + " " + names[0]
	}
	return noun + "s " + strings.Join(names, ", ")
}

func article(jsonType string) string {
	switch jsonType {
	case "integer", "array", "object":
		return "an " + jsonType
	case "null":
		return "null"
	case "boolean":
		return "true or false"
	}
	return "a " + jsonType
}
