package mcpserver

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
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
