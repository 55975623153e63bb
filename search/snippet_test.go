package search_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atrium-hq/atrium/search"
)

func TestSnippet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, q string
		line          int
		context       string
	}{
		{"empty body", "", "deploy", 0, ""},
		{"first matching line", "intro\n\nWe deploy on Mondays.\nDeploy again", "deploy", 3, "We deploy on Mondays."},
		{"most distinct tokens win", "deploy deploy deploy\nstaging\ndeploy to staging", "deploy staging", 3, "deploy to staging"},
		{"ties go to the earliest", "staging first\ndeploy second", "deploy staging", 1, "staging first"},
		{"phrase words and prefixes count", "error\narchitecture error budget", `"error budget" arch*`, 2, "architecture error budget"},
		{"excluded words do not", "legacy deploy docs\nlegacy legacy", "deploy -legacy", 1, "legacy deploy docs"},
		{"normalized", "x\nLe CAFÉ ouvre", "cafe", 2, "Le CAFÉ ouvre"},
		{"whitespace collapsed", "  \t\n\t We   deploy\t\ton  Mondays \r\n", "deploy", 2, "We deploy on Mondays"},
		{"CRLF line numbers", "a\r\nb\r\ndeploy\r\n", "deploy", 3, "deploy"},
		{"no line matches", "\n  \n First  line\nsecond", "title", 0, "First line"},
		{"blank body", " \n\t\n", "deploy", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			line, context := search.Snippet(tt.body, mustParse(t, tt.q))
			if line != tt.line || context != tt.context {
				t.Errorf("Snippet(%q, %q) = %d, %q; want %d, %q", tt.body, tt.q, line, context, tt.line, tt.context)
			}
		})
	}
}

func TestSnippetCut(t *testing.T) {
	t.Parallel()
	words := strings.Fields(strings.Repeat("alpha beta gamma delta epsilon ", 20))
	long := func(at int, w string) string {
		ws := append([]string(nil), words...)
		ws[at] = w
		return strings.Join(ws, " ")
	}
	tests := []struct {
		name, line, q      string
		wantHead, wantTail bool // cut before, after
	}{
		{"match in the middle", long(50, "deploy"), "deploy", true, true},
		{"match at the start", long(0, "deploy"), "deploy", false, true},
		{"match at the end", long(len(words)-1, "deploy"), "deploy", true, false},
		{"match near the end", long(len(words)-3, "deploy"), "deploy", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			line, got := search.Snippet("first\n"+tt.line, mustParse(t, tt.q))
			if line != 2 {
				t.Errorf("line %d, want 2", line)
			}
			if len(got) > search.MaxContext || len(got) < search.MaxContext-20 {
				t.Errorf("context is %d bytes, want a little under %d: %q", len(got), search.MaxContext, got)
			}
			head, tail := strings.HasPrefix(got, "…"), strings.HasSuffix(got, "…")
			if head != tt.wantHead || tail != tt.wantTail {
				t.Errorf("context %q: cut before %v, after %v; want %v, %v", got, head, tail, tt.wantHead, tt.wantTail)
			}
			inner := strings.TrimSuffix(strings.TrimPrefix(got, "…"), "…")
			if !strings.Contains(" "+tt.line+" ", " "+inner+" ") {
				t.Errorf("context %q is not cut at word boundaries of the line", got)
			}
			if !strings.Contains(inner, "deploy") {
				t.Errorf("context %q lost the match", got)
			}
		})
	}
}

// Text without spaces can only be cut between runes, never inside one.
func TestSnippetMultiByte(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, line, q string }{
		{"CJK without spaces", strings.Repeat("日本語の文章。", 30) + "検索" + strings.Repeat("。日本語の文章", 30), "検索"},
		{"one long word", strings.Repeat("é", 100) + "-deploy-" + strings.Repeat("ü", 100), "deploy"},
		{"invalid UTF-8", strings.Repeat("ab\xff ", 60) + "deploy" + strings.Repeat(" \xffcd", 60), "deploy"},
		{"no match", strings.Repeat("日本語", 100), "nothing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, got := search.Snippet(tt.line, mustParse(t, tt.q))
			if !utf8.ValidString(got) || len(got) > search.MaxContext {
				t.Errorf("context %q: %d bytes, valid UTF-8 %v", got, len(got), utf8.ValidString(got))
			}
			if tt.q != "nothing" && !strings.Contains(got, tt.q) {
				t.Errorf("context %q lost the match %q", got, tt.q)
			}
		})
	}
}

func FuzzSnippet(f *testing.F) {
	f.Add("intro\nWe deploy on Mondays\n", "deploy")
	f.Add(strings.Repeat("日本語の文章。", 40), "文章*")
	f.Add(strings.Repeat("word ", 50)+"error budget"+strings.Repeat(" word", 50), `"error budget" -x`)
	f.Add("a\xff\xfe b\r\n\u2028c", "b")
	f.Fuzz(func(t *testing.T, body, q string) {
		query, err := search.ParseQuery(q)
		if err != nil {
			query = search.Query{Terms: []search.Term{{Text: "a", Prefix: true}}}
		}
		line, context := search.Snippet(body, query)
		switch {
		case !utf8.ValidString(context):
			t.Fatalf("Snippet(%q, %q) context %q is not valid UTF-8", body, q, context)
		case len(context) > search.MaxContext:
			t.Fatalf("Snippet(%q, %q) context is %d bytes", body, q, len(context))
		case strings.ContainsAny(context, "\r\n\t"):
			t.Fatalf("Snippet(%q, %q) context %q is not one line", body, q, context)
		case line < 0 || line > strings.Count(body, "\n")+1:
			t.Fatalf("Snippet(%q, %q) line %d out of range", body, q, line)
		case strings.TrimSpace(body) != "" && context == "":
			t.Fatalf("Snippet(%q, %q) gave no context", body, q)
		}
	})
}
