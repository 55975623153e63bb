package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/api"
	"github.com/atrium-hq/atrium/internal/jsonerr"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// bodyFields are the JSON names of every struct field declared in the
// package's sources: the fields a request body can carry. Read from the
// code, so that a new body's fields are tried without anyone listing them.
func bodyFields(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			field, ok := n.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			tag, _ := strconv.Unquote(field.Tag.Value)
			name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
			if name != "" && name != "-" && !slices.Contains(names, name) {
				names = append(names, name)
			}
			return true
		})
	}
	if len(names) < 5 {
		t.Fatalf("found only body fields %v", names)
	}
	return names
}

// No REST answer names Go internals (defect 10: "Go struct field
// putBody.content", "review.QuoteIn"): every route, given bodies that are
// not JSON, not objects, or that give each known field a value of the wrong
// JSON type, says what is wrong in the API's terms.
func TestRESTErrorsNameNoGoInternals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		s := mustServer(t, e)
		s.do(t, call{name: "page", method: "PUT", url: "/api/pages/Bad.md", token: s.writer, body: jsonBody(map[string]any{"content": "# Bad\n\ntext\n"}), status: 201})
		ann := idOf(t, s.do(t, call{name: "annotation", method: "POST", url: "/api/annotations", token: s.writer, body: `{"doc_path":"Bad.md","content":"why?"}`, status: 201}), "annotation")
		rev := idOf(t, s.do(t, call{name: "review", method: "POST", url: "/api/reviews", token: s.writer, body: `{"doc_path":"Bad.md","summary":"s"}`, status: 201}), "review")
		s.do(t, call{name: "task", method: "POST", url: "/api/tasks", token: s.writer, body: `{"title":"Bad"}`, status: 201})

		bodies := []string{"", "{bad", "[]", `"s"`, "42", `{"no_such_field":1}`, `{"quote":{"exact":5}}`, `{"operations":[{"op":5}]}`, `{"content":"x"} trailing`}
		for _, f := range bodyFields(t) {
			for _, v := range []string{`42`, `"s"`, `{}`} {
				bodies = append(bodies, `{"`+f+`":`+v+`}`)
			}
		}
		tried := 0
		for _, pattern := range api.Routes() {
			method, path, _ := strings.Cut(pattern, " ")
			id := ann
			if strings.HasPrefix(path, "/api/reviews/") {
				id = rev
			}
			path = strings.NewReplacer("{id}", id, "{n}", "1").Replace(path)
			var urls []string
			if strings.Contains(path, "{path...}") {
				for _, sub := range []string{"", "/links", "/revisions", "/move", "/restore", "/attachments"} {
					urls = append(urls, strings.Replace(path, "{path...}", "Bad.md"+sub, 1))
				}
			} else {
				urls = append(urls, path)
			}
			for _, u := range urls {
				if method == http.MethodGet {
					u += "?limit=x&revision=y&include_private=z&q=%22"
				}
				for _, body := range bodies {
					if method == http.MethodGet && body != "" {
						continue
					}
					tried++
					req, err := http.NewRequest(method, s.url+u, strings.NewReader(body))
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+s.writer)
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if m := jsonerr.GoName.FindString(string(b)); m != "" {
						t.Errorf("%s %s %s: the answer names Go internals (%q): %s", method, u, body, m, b)
					}
					if res.StatusCode >= 500 {
						t.Errorf("%s %s %s: status %d: %s", method, u, body, res.StatusCode, b)
					}
				}
			}
		}
		t.Logf("RELIABILITY rest-errors: routes=%d requests=%d", len(api.Routes()), tried)
	})
}
