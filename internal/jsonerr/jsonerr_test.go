package jsonerr_test

import (
	"encoding/json"
	"testing"

	"github.com/atrium-hq/atrium/internal/jsonerr"
)

func TestDescribe(t *testing.T) {
	type quote struct {
		Exact string `json:"exact"`
	}
	type Embedded struct {
		Title string `json:"title"`
	}
	type body struct {
		Embedded
		Content string   `json:"content"`
		Count   int      `json:"count"`
		Tags    []string `json:"tags"`
		Quote   *quote   `json:"quote"`
		On      bool     `json:"on"`
	}
	for _, c := range []struct{ in, want string }{
		{`{bad`, "invalid JSON at byte 2: invalid character 'b' looking for beginning of object key string"},
		{`{"content":42}`, "field content: expected a string, got a number"},
		{`{"count":"x"}`, "field count: expected an integer, got a string"},
		{`{"tags":{}}`, "field tags: expected an array, got an object"},
		{`{"quote":"x"}`, "field quote: expected an object, got a string"},
		{`{"quote":{"exact":[1]}}`, "field quote.exact: expected a string, got an array"},
		{`{"on":1}`, "field on: expected true or false, got a number"},
		{`{"title":1}`, "field title: expected a string, got a number"},
		{`[]`, "expected an object, got an array"},
		{`{"content":"x"`, "invalid JSON at byte 14: unexpected end of JSON input"},
	} {
		var b body
		err := json.Unmarshal([]byte(c.in), &b)
		if err == nil {
			t.Fatalf("%s decoded", c.in)
		}
		got := jsonerr.Describe(err)
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
		if jsonerr.GoName.MatchString(got) {
			t.Errorf("%s: %q names Go", c.in, got)
		}
	}
}
