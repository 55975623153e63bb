package pages_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
)

// The relevance benchmark ranks natural questions over a real documentation
// site, Traefik's (the Markdown under docs/content of its Go module, pinned
// below), and scores the answers: success@5 is the share of questions with an
// answering page among the first five results, MRR the mean of 1/rank of the
// first answering page (0 when none is in the first 20). The questions and the
// pages that answer them are in testdata/relevance; the corpus is not
// committed: the go command fetches the pinned module into its module cache,
// and the benchmark skips, saying why, when it cannot.
//
//	make bench-search    (or: go test ./pages -run '^$' -bench Relevance -v)
const (
	relevanceModule = "github.com/traefik/traefik/v3"
	relevanceVer    = "v3.7.13"
	relevanceDocs   = "docs/content"
	relevanceQrels  = "testdata/relevance/traefik-v3.7.13.tsv"
)

func BenchmarkRelevance(b *testing.B) {
	dir := relevanceCorpus(b)
	qs := readQrels(b, relevanceQrels)
	v := mustEnv(b, store.SQLite)
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if _, err := v.svc.WritePage(v.ctx, pages.WriteRequest{Path: filepath.ToSlash(rel), Content: string(content), Overwrite: true}); err != nil {
			b.Logf("left out %s: %v", rel, err)
			return nil
		}
		n++
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	var success, rr float64
	var misses []string
	for b.Loop() {
		success, rr, misses = 0, 0, nil
		for _, q := range qs {
			res, err := v.svc.Search(v.ctx, pages.SearchRequest{Query: q.question, Limit: 20})
			if err != nil {
				b.Fatalf("%q: %v", q.question, err)
			}
			rank := 0
			for i, h := range res.Hits {
				if q.answers[h.Path] {
					rank = i + 1
					break
				}
			}
			if rank > 0 {
				rr += 1 / float64(rank)
			}
			if rank > 0 && rank <= 5 {
				success++
				continue
			}
			var top []string
			for _, h := range res.Hits[:min(3, len(res.Hits))] {
				top = append(top, h.Path)
			}
			misses = append(misses, fmt.Sprintf("%q: first answer at rank %d; top: %s", q.question, rank, strings.Join(top, ", ")))
		}
	}
	if testing.Verbose() {
		// b.Log would cut the list after ten lines.
		for _, m := range misses {
			fmt.Fprintln(os.Stderr, "miss", m)
		}
	}
	success /= float64(len(qs))
	rr /= float64(len(qs))
	b.Logf("RELEVANCE %s@%s: pages=%d questions=%d success@5=%.3f MRR=%.3f", relevanceModule, relevanceVer, n, len(qs), success, rr)
	b.ReportMetric(success, "success@5")
	b.ReportMetric(rr, "MRR")
}

type qrel struct {
	question string
	answers  map[string]bool
}

func readQrels(b *testing.B, path string) []qrel {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out []qrel
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		question, answers, ok := strings.Cut(line, "\t")
		if !ok {
			b.Fatalf("%s: no tab in %q", path, line)
		}
		q := qrel{question: question, answers: map[string]bool{}}
		for a := range strings.SplitSeq(answers, ",") {
			q.answers[strings.TrimSpace(a)] = true
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// relevanceCorpus returns the folder of the corpus's Markdown, fetching the
// pinned module with the go command (from its module cache when there).
func relevanceCorpus(b *testing.B) string {
	// Without the corpus the benchmark skips; where it is required
	// (ATRIUM_REQUIRE_RELEVANCE=1, as in CI), it fails.
	skip := b.Skipf
	if os.Getenv("ATRIUM_REQUIRE_RELEVANCE") == "1" {
		skip = b.Fatalf
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		skip("relevance corpus %s@%s: no go command to fetch it with: %v", relevanceModule, relevanceVer, err)
	}
	cmd := exec.Command(goBin, "mod", "download", "-json", relevanceModule+"@"+relevanceVer)
	// Outside this module, so that nothing reads or changes go.mod.
	cmd.Dir = b.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	out, err := cmd.Output()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &m); jerr != nil || m.Error != "" || m.Dir == "" {
		skip("relevance corpus %s@%s could not be fetched through the Go module proxy (%v %s): skipping the relevance benchmark", relevanceModule, relevanceVer, err, m.Error)
	}
	dir := filepath.Join(m.Dir, filepath.FromSlash(relevanceDocs))
	if _, err := os.Stat(dir); err != nil {
		skip("relevance corpus: %s has no %s: %v", m.Dir, relevanceDocs, err)
	}
	return dir
}
