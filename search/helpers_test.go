package search_test

import (
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/search"
)

// vocabulary mixes common words, capitals, accents and digits, as pages do.
var vocabulary = strings.Fields(`the a of to and deploy Deploy staging server error budget
	policy Café résumé naïve release v2 2024 incident postmortem architecture archive
	arch review agent workspace page Markdown heading tag search query index rank
	latency p99 SLO on-call runbook rollback canary Kubernetes cluster node pod database
	PostgreSQL SQLite migration schema token parser snippet BM25 score weight field`)

// corpusText returns about n bytes of deterministic prose.
func corpusText(n int) string { return prose(1, n) }

// prose returns about n bytes of prose, the same for the same seed.
func prose(seed uint64, n int) string {
	rng := rand.New(rand.NewPCG(seed, 2))
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
		switch rng.IntN(12) {
		case 0:
			b.WriteString(".\n")
		case 1:
			b.WriteString(", ")
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// indexWords is PageIndex.Words as its definition reads: every token of
// fields whose stem is another word, sorted and distinct.
func indexWords(fields ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, toks := range fields {
		for _, t := range toks {
			if !seen[t] && search.Stem(t) != t {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}
