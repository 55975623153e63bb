package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/web"
)

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// values reads "k=v&k2=v2" loosely: any text at all makes some values, so
// that the fuzzer's bytes reach the handlers rather than a parse error.
func values(s string) url.Values {
	v := url.Values{}
	for _, kv := range strings.Split(s, "&") {
		k, val, _ := strings.Cut(kv, "=")
		v.Add(k, val)
	}
	return v
}

// FuzzWebRoutes throws paths, query strings and form values at every route
// of web.Routes(), signed in as an admin: whatever comes, the answer is not
// a 5xx and nothing panics. Without -fuzz it runs the seeds, as a test.
//
//	go test ./web -run '^$' -fuzz FuzzWebRoutes -fuzztime 30s
func FuzzWebRoutes(f *testing.F) {
	routes := web.Routes()
	// One seed per route, the shapes taken in turn: every route and every
	// shape is seeded, and the baseline (run before any fuzzing, one input
	// at a time) takes a second or two, not the whole of a 10 s run.
	seeds := [][3]string{
		{"Design.md", "", "content=hello&doc_path=Design.md&base_revision=1"},
		{"Folder/Page.md", "edit=&folder=Folder&after=&q=design", "content=x&parent_id=ann_x&quote_exact=hello&summary=s"},
		{"../../etc/passwd", "folder=../x&after=%21%21&until=zz&cursor=!!&revision=-1", "doc_path=/../x&content=&base_revision=abc"},
		{"a/\x00b.md/history", "q=\"unclosed +-&path=\x00&tags=,,,&after=-5", "token=atr_bad&destination_path=Design.md"},
		{strings.Repeat("x/", 70) + "y.md", "from=1&to=99999999999999999999&edit", "content=" + strings.Repeat("z", 5000)},
		{"resolve", "folder=" + strings.Repeat("f/", 80), "id=&action=delete"},
	}
	for i := range routes {
		seed := seeds[i%len(seeds)]
		f.Add(uint8(i), seed[0], seed[1], seed[2])
	}
	s := newSite(f)
	s.write(f, "Design.md", "# Design\n\nSome text to quote: hello.\n")
	s.write(f, "Folder/Page.md", "# Page\n")
	f.Fuzz(func(t *testing.T, route uint8, param, query, form string) {
		pattern := routes[int(route)%len(routes)]
		method, target, _ := strings.Cut(pattern, " ")
		parts := strings.SplitN(param, "|", 3)
		n := 0
		path := wildcard.ReplaceAllStringFunc(target, func(w string) string {
			v := parts[min(n, len(parts)-1)]
			n++
			if strings.HasSuffix(w, "...}") {
				return v
			}
			return strings.ReplaceAll(v, "/", "_")
		})
		path = strings.ReplaceAll(path, "{$}", "")
		var req *http.Request
		if method == http.MethodPost {
			req = httptest.NewRequest(method, "/", strings.NewReader(values(form).Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			req = httptest.NewRequest(method, "/", nil)
		}
		req.URL = &url.URL{Path: path, RawQuery: values(query).Encode()}
		req.RequestURI = req.URL.RequestURI()
		req.Header.Set("Authorization", "Bearer "+s.secret)
		// A stream ends when its reader goes: this reader goes as soon as
		// anything is written.
		ctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		rec := &leaver{ResponseRecorder: httptest.NewRecorder(), cancel: cancel}
		s.mux.ServeHTTP(rec, req.WithContext(ctx))
		if rec.Code >= 500 {
			t.Fatalf("%s %.200q?%.200q form %.200q: %d\n%.300s", method, path, req.URL.RawQuery, form, rec.Code, rec.Body.String())
		}
	})
}

// leaver is a reader that leaves once the answer starts.
type leaver struct {
	*httptest.ResponseRecorder
	cancel context.CancelFunc
}

func (l *leaver) Write(b []byte) (int, error) {
	defer l.cancel()
	return l.ResponseRecorder.Write(b)
}

func (l *leaver) Flush() {
	l.cancel()
	l.ResponseRecorder.Flush()
}
