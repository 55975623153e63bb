package mcpserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestPortableDropsNullFromTypeUnions(t *testing.T) {
	type inner struct {
		Tags []string `json:"tags"`
	}
	type out struct {
		Names []string `json:"names"`
		Inner *inner   `json:"inner,omitempty"`
		List  []inner  `json:"list"`
	}
	s, err := jsonschema.For[out](nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(portable(s))
	if got := string(b); strings.Contains(got, `"null"`) {
		t.Fatalf("schema still allows null: %s", got)
	}
}

func TestEmptySlicesFillsEveryNilSlice(t *testing.T) {
	type inner struct{ Tags []string }
	type out struct {
		Names []string
		Inner *inner
		List  []inner
		Map   map[string][]int
		priv  []int
	}
	v := out{Inner: &inner{}, List: []inner{{}}}
	emptySlices(reflect.ValueOf(&v))
	b, _ := json.Marshal(v)
	want := `{"Names":[],"Inner":{"Tags":[]},"List":[{"Tags":[]}],"Map":null}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
	if v.priv != nil {
		t.Error("unexported field touched")
	}
}
