package markdown_test

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/markdown"
)

func TestPlainText(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, want string }{
		{"empty", "", ""},
		{"emphasis and links", "Some *bold* and **strong**text, [a link](x.md \"t\") and ![an image](i.png).\n",
			"Some bold and strongtext, a link and an image.\n"},
		{"headings", "# Title 🚀\n\nSetext\n===\n## Closed ##\n", "Title 🚀\n\nSetext\n\nClosed\n"},
		{"wikilinks", "See [[Alpha]], [[Beta|the beta]], [[#Local]], [[Gamma#Part]], ![[pic.png]].", "See Alpha, the beta, Local, Gamma#Part, pic.png."},
		{"code kept", "Run `go test` now.\n\n```sh\n$ make [[all]]\n```\n\n    indented *code*\n",
			"Run go test now.\n\n\n$ make [[all]]\n\n\nindented *code*\n"},
		{"escapes and entities", `a \* b &amp; c &#35; \[[x]]`, "a * b & c # [[x]]"},
		{"lists and quotes", "- one\n- two\n  > quoted `c`\n1. three\n", "one\ntwo\nquoted c\nthree\n"},
		{"HTML", "<div class=\"x\">\nInside <b>bold</b>\n</div>\n\n<!-- hidden\nnote -->\n\nText <span>kept</span>.\n", "\nInside  bold\n\n\n\n\n\nText kept.\n"},
		{"references", "[one][r]\n\n[r]: https://example.com \"T\"\n", "one\n\n\n"},
		{"autolink and break", "<https://example.com> x\\\ny  \nz\n", "https://example.com x\ny\nz\n"},
		{"CRLF", "# A\r\n\r\ntext\r\n", "A\n\ntext\n"},
		{"thematic break", "a\n\n---\n\nb", "a\n\n\n\nb"},
		// MkDocs blocks read as they render: the title where the opening
		// line was, the body as Markdown (not code).
		{"admonitions and tabs", "!!! note \"Install *first*\"\n    Run **make**.\n\n=== \"Tab\"\n\n    In [the tab](t.md).\n\n??? tip\n    x\n",
			"Install *first*\nRun make.\n\nTab\n\nIn the tab.\n\nTip\nx\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := markdown.PlainText(tt.body)
			if got != tt.want {
				t.Errorf("PlainText(%q)\n got %q\nwant %q", tt.body, got, tt.want)
			}
			if g, w := strings.Count(got, "\n"), strings.Count(tt.body, "\n"); g != w {
				t.Errorf("PlainText has %d line breaks, the body %d", g, w)
			}
		})
	}
}
