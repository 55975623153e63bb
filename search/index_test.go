package search_test

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/atrium-hq/atrium/search"
)

// IndexPage gives what indexTokens and a posting written out by the book
// (PagePostings' format, one stem at a time) give, on pages of every field,
// repeated words, words whose stem is another word, and empty fields.
func TestIndexPageMatchesTheFormat(t *testing.T) {
	docs := []search.Doc{
		{},
		{Body: search.Terms("running runs run the runner ran")},
		{
			Title:    search.Terms("Deploying the deploy"),
			Tags:     search.Terms("ops deploy"),
			Headings: search.Terms("Deployments\nRolling back"),
			Body:     search.Terms("Deploy, deployed, deploying: every deployment rolls back when a check fails. Checks check checking."),
			Aliases:  search.Terms("rollout"),
			Summary:  search.Terms("How we deploy"),
			Meta:     search.Terms("owner ops"),
		},
	}
	for i := range 20 {
		text := prose(uint64(100+i), 400+97*i)
		lines := strings.Split(text, "\n")
		docs = append(docs, search.Doc{
			Title:    search.Terms(lines[0]),
			Headings: search.Terms(strings.Join(lines[1:min(3, len(lines))], "\n")),
			Body:     search.Terms(text),
			Meta:     search.Terms(lines[len(lines)-1]),
		})
	}
	for i, d := range docs {
		for _, public := range []bool{false, true} {
			t.Run(fmt.Sprintf("doc%d-public=%v", i, public), func(t *testing.T) {
				got := search.IndexPage(d, public)
				f := d.Fields()
				if diff := cmp.Diff(indexWords(f[:]...), got.Words, cmpEmpty); diff != "" {
					t.Errorf("words (-indexWords +IndexPage):\n%s", diff)
				}
				for i, w := range got.Words {
					if got.WordStems[i] != search.Stem(w) {
						t.Errorf("word %q: stem %q, want %q", w, got.WordStems[i], search.Stem(w))
					}
				}
				stems, postings := postingsByTheBook(d, public)
				if diff := cmp.Diff(stems, got.Stems, cmpEmpty); diff != "" {
					t.Errorf("stems (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(got.Stems, search.PageStems(d), cmpEmpty); diff != "" {
					t.Errorf("PageStems (-IndexPage +PageStems):\n%s", diff)
				}
				if diff := cmp.Diff(postings, got.Postings, cmpEmpty); diff != "" {
					t.Errorf("postings (-want +got):\n%s", diff)
				}
			})
		}
	}
}

var cmpEmpty = cmpopts.EquateEmpty()

// postingsByTheBook writes each stem's posting as the format says, looking
// the stem up in every field, one stem at a time.
func postingsByTheBook(d search.Doc, public bool) ([]string, [][]byte) {
	fields := d.Fields()
	var stems []string
	for _, toks := range fields {
		for _, tok := range toks {
			stems = append(stems, search.Stem(tok))
		}
	}
	slices.Sort(stems)
	stems = slices.Compact(stems)
	var postings [][]byte
	for _, st := range stems {
		var flags byte
		if public {
			flags = 1 << search.NumFields
		}
		var head, positions []byte
		for f, toks := range fields {
			var at []int
			for pos, tok := range toks {
				if search.Stem(tok) == st {
					at = append(at, pos)
				}
			}
			if len(at) == 0 {
				continue
			}
			flags |= 1 << f
			head = binary.AppendUvarint(head, uint64(len(at)))
			head = binary.AppendUvarint(head, uint64(len(toks)))
			for k, pos := range at {
				if k > 0 {
					pos -= at[k-1]
				}
				positions = binary.AppendUvarint(positions, uint64(pos))
			}
		}
		postings = append(postings, append(append([]byte{flags}, head...), positions...))
	}
	return stems, postings
}
