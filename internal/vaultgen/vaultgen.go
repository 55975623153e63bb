// Package vaultgen generates a deterministic Markdown vault for tests and
// benchmarks: the same seed and size always give the same pages, with
// frontmatter, nested headings, wikilinks and Markdown links between pages, a
// long-tailed vocabulary, and marker words that occur in a known share of
// the pages (so that a benchmark can search for "a word in 0.1% of pages").
package vaultgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
)

// A Page is one generated file.
type Page struct {
	Path    string
	Content string
}

// Marker returns the marker word that occurs in one page of every per: for
// n pages, "marker1000" is in n/1000 of them (0.1%).
func Marker(per int) string { return fmt.Sprintf("marker%d", per) }

// markers are the shares of pages holding a marker word.
var markers = []int{10, 100, 1000, 10000}

var folders = []string{"Projects", "Areas", "Resources", "Archive", "Journal", "Meetings", "Specs", "People"}

// Generate calls fn with each of n pages of the vault of seed, in path order
// within each folder. It stops at the first error fn returns.
func Generate(seed uint64, n int, fn func(Page) error) error {
	for i := range n {
		if err := fn(PageAt(seed, n, i)); err != nil {
			return err
		}
	}
	return nil
}

// PathAt is the path of page i of a vault of n pages.
func PathAt(n, i int) string {
	folder := folders[i%len(folders)]
	sub := (i / len(folders)) % 50
	if n > 2000 {
		return fmt.Sprintf("%s/Group %02d/Note %06d.md", folder, sub, i)
	}
	return fmt.Sprintf("%s/Note %06d.md", folder, i)
}

// PageAt generates page i of the vault of seed with n pages.
func PageAt(seed uint64, n, i int) Page {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	var b strings.Builder
	title := fmt.Sprintf("Note %06d %s", i, words(r, 2))
	fmt.Fprintf(&b, "---\ntitle: %s\ntags: [%s, %s]\n", title, vocab[r.IntN(40)], vocab[r.IntN(40)])
	if i%3 == 0 {
		b.WriteString("access: public\n")
	}
	b.WriteString("---\n")
	fmt.Fprintf(&b, "# %s\n\n", title)
	for s := range 2 + r.IntN(3) {
		fmt.Fprintf(&b, "## %s %d\n\n", strings.ToUpper(vocab[r.IntN(200)][:1])+vocab[r.IntN(200)][1:], s+1)
		for range 1 + r.IntN(3) {
			b.WriteString(sentence(r))
			b.WriteString(" ")
			b.WriteString(sentence(r))
			b.WriteString("\n\n")
		}
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, "### Details\n\n%s\n\n", sentence(r))
		}
	}
	for _, per := range markers {
		if i%per == per/2 {
			fmt.Fprintf(&b, "This page mentions %s for the benchmarks.\n\n", Marker(per))
		}
	}
	if n > 1 {
		j := r.IntN(n)
		fmt.Fprintf(&b, "Related: [[%s]] and [another](%s).\n", strings.TrimSuffix(PathAt(n, j), ".md"), relative(PathAt(n, i), PathAt(n, (j+1)%n)))
	}
	return Page{Path: PathAt(n, i), Content: b.String()}
}

// relative is a Markdown link from page from to page to.
func relative(from, to string) string {
	fromDir := strings.Split(from, "/")
	toParts := strings.Split(to, "/")
	fromDir = fromDir[:len(fromDir)-1]
	common := 0
	for common < len(fromDir) && common < len(toParts)-1 && fromDir[common] == toParts[common] {
		common++
	}
	var parts []string
	for range len(fromDir) - common {
		parts = append(parts, "..")
	}
	parts = append(parts, toParts[common:]...)
	return strings.ReplaceAll(strings.Join(parts, "/"), " ", "%20")
}

// sentence is 6 to 16 words, drawn with a long tail: a few words are very
// common, most are rare, as in real prose.
func sentence(r *rand.Rand) string {
	w := words(r, 6+r.IntN(11))
	return strings.ToUpper(w[:1]) + w[1:] + "."
}

func words(r *rand.Rand, n int) string {
	out := make([]string, n)
	for k := range out {
		// Powers of a uniform draw favour the front of a list: a few words
		// are everywhere, most are rare — the shape of real prose.
		f := r.Float64()
		if r.IntN(10) < 7 {
			out[k] = vocab[int(f*f*float64(len(vocab)))]
		} else {
			tail := longTailWords()
			out[k] = tail[int(f*f*f*float64(len(tail)))]
		}
	}
	return strings.Join(out, " ")
}

// longTail is 20 000 made-up words, the rare vocabulary of a real vault
// (names, jargon, typos) that makes most words occur in few pages. Built on
// first use: the atrium binary links this package for gen-vault, and every
// start should not pay for it.
var longTailWords = sync.OnceValue(func() []string {
	syl := strings.Fields("ka lo ri ven to mar sel dun pi qua bre zo fin gal hu ter nox ply sta wum")
	out := make([]string, 0, 20000)
	for i := 0; len(out) < cap(out); i++ {
		w, n := "", i
		for range 2 + i%3 {
			w += syl[n%len(syl)]
			n /= len(syl)
		}
		out = append(out, w)
	}
	return out
})

// vocab is ordered from common to rare.
var vocab = strings.Fields(`the of and to in is that for it as with was on be by this are from or at an
project design storage system data service team plan review release deploy database search index page
document note meeting decision risk owner deadline budget customer feature issue bug fix test build
metric latency throughput cache queue worker agent model prompt token session user account access policy
security backup restore migration schema query replica cluster node network router gateway proxy server
client protocol transport stream event log trace alert incident postmortem runbook oncall rotation sprint
roadmap milestone objective result goal strategy vision mission value principle architecture diagram
component interface contract module package library dependency version upgrade rollback canary rollout
feature flag experiment hypothesis analysis report dashboard chart graph table column row record field
archive journal retrospective standup planning grooming estimate velocity capacity headcount hiring onboarding
mentor career growth feedback performance compensation benefit vacation holiday travel expense invoice
contract vendor partner supplier procurement legal compliance audit regulation privacy consent retention
deletion encryption signature certificate rotation secret vault credential identity federation directory
kubernetes terraform ansible docker container image registry artifact pipeline workflow action runner
golang rust python typescript javascript sql postgres sqlite redis kafka nats rabbitmq grpc rest graphql
markdown wiki backlink wikilink heading section frontmatter attachment mirror folder vault obsidian notion
astronomy botany chemistry dialect ecology folklore geology harmony iconography jurisprudence kinetics
lithography metallurgy numismatics oceanography paleontology quantum rhetoric seismology taxonomy urbanism
viticulture woodworking xylography yachting zoology aqueduct bastion citadel drawbridge embrasure
fortress gatehouse keep merlon parapet rampart turret watchtower battlement moat portcullis`)
