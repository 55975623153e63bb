package pages

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/internal/vaultgen"
	"github.com/atrium-hq/atrium/search"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// Ranking a query word by word and stopping early, or from the postings
// index, must give exactly what scoring every candidate gives.
func TestRankByTermEqualsRankAll(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t, store.SQLite, nil)
	a := identitytest.Agent(t, identitytest.New(t, db), "t", "")
	ctx = atrium.NewContextWithActor(ctx, a)
	svc := New(db, nil)
	err := vaultgen.Generate(3, 600, func(p vaultgen.Page) error {
		_, err := svc.WritePage(ctx, WriteRequest{Path: p.Path, Content: p.Content})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	unread, postings, planned := 0, 0, 0
	for _, query := range []string{"storage migration review plan", "fortress moat", "arch* kubernetes", "note -design", vaultgen.Marker(100) + " database",
		// Rare words beside common ones: ranking settles without the
		// common words' lists, and counts the matches instead.
		"how do we plan the storage migration review", vaultgen.Marker(100) + " the plan storage review note",
		vaultgen.Marker(10) + " " + vaultgen.Marker(100) + " database storage -fortress", "the",
		// The speed benchmark's question of eight common words, and words
		// whose stems carry the mark of a cut silent e (note → not_).
		"what is our plan for the storage migration and the release review with the team budget",
		"notes on the planned release -not", "noting pages",
		// Required words rank from the postings index too.
		"+storage migration review", "+plan +review the team", "+" + vaultgen.Marker(100) + " storage -plan",
		// An excluded phrase takes its pages out by the lists' positions.
		`storage review -"the plan"`, `arch* -"storage migration"`,
		// Prefixes rank from the lists when those hold just the words they
		// begin; when they do not, or overlap another word, by reading.
		"stor* migration", "+stor* review plan", "migr* +plan", "revi* -stor*", "relea* review*", "plan* plan", "stor* stora*",
		"not* release", "+budg* -" + vaultgen.Marker(100), "zzzz* plan",
		// Phrases, whose words Match scores apart, rank from the lists
		// too.
		`"storage migration"`, `"the plan" review`, `"storage migration" "review plan" -team`, `"plan the plan" plan`,
		`+review "the storage" stor*`, `"no such phrase here" plan`, `"migration review" -"the plan" -` + vaultgen.Marker(100)} {
		for _, c := range []struct {
			k, cheapDF int
			f          store.CandidateFilter
		}{
			{1, 0, store.CandidateFilter{IncludePrivate: true}}, {5, 0, store.CandidateFilter{IncludePrivate: true}},
			{40, 0, store.CandidateFilter{IncludePrivate: true}}, {5, 1000, store.CandidateFilter{IncludePrivate: true}},
			{40, 1000, store.CandidateFilter{IncludePrivate: true}},
			// Filters count and read through the pages table instead.
			{5, 0, store.CandidateFilter{IncludePrivate: true, Prefix: store.PathKey(path.Dir(vaultgen.PathAt(600, 0))) + "/"}},
			{5, 0, store.CandidateFilter{}}, // public pages only
		} {
			k := c.k
			q, err := search.ParseQuery(query)
			if err != nil {
				t.Fatal(err)
			}
			words, optional := onlyOptionalWords(q)
			var byTerm, all, fromPostings []hit
			var totalByTerm, totalAll, totalPostings SearchResult
			fromLists := false
			err = db.View(ctx, func(tx *store.Tx) error {
				rk, err := newRanking(ctx, tx, a.Workspace.ID, q, &dfCache{})
				if err != nil {
					return err
				}
				rk.cheapDF = c.cheapDF
				f := c.f
				t1, t2 := newTopK(k), newTopK(k)
				if optional {
					if err := rk.rankByTerm(ctx, words, f, t1, &totalByTerm); err != nil {
						return err
					}
				}
				if err := rk.rankAll(ctx, f, t2, &totalAll); err != nil {
					return err
				}
				byTerm, all = t1.sorted(), t2.sorted()
				unread += rk.unread
				plan, ok, err := testPlan(ctx, tx, a.Workspace.ID, q)
				if err != nil {
					return err
				}
				if fromLists = ok; fromLists {
					t3 := newTopK(k)
					if _, err := rankPostings(ctx, tx, a.Workspace.ID, plan, 0, f, t3, &totalPostings); err != nil {
						return err
					}
					fromPostings = t3.sorted()
					postings++
					if !search.RanksFromPostings(q) {
						planned++
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(all, byTerm, cmp.AllowUnexported(hit{})); optional && (diff != "" || totalAll.Total != totalByTerm.Total) {
				t.Errorf("%q top %d (cheap lists up to %d): totals %d vs %d; (-all +byTerm):\n%s", query, k, c.cheapDF, totalAll.Total, totalByTerm.Total, diff)
			}
			if diff := cmp.Diff(all, fromPostings, cmp.AllowUnexported(hit{})); fromLists && (diff != "" || totalAll.Total != totalPostings.Total) {
				t.Errorf("%q top %d from postings: totals %d vs %d; (-all +postings):\n%s", query, k, totalAll.Total, totalPostings.Total, diff)
			}
		}
	}
	if postings == 0 || planned == 0 {
		t.Errorf("%d queries ranked from the postings index, %d of them with phrases or prefixes: the test misses a path", postings, planned)
	}
	if unread == 0 {
		t.Error("no query settled its top without reading every list: the test misses that path")
	}
}

// testPlan is how Search ranks q from the lists, if it does.
func testPlan(ctx context.Context, tx *store.Tx, ws int64, q search.Query) (listPlan, bool, error) {
	if search.RanksFromPostings(q) {
		return wordPlan(q), true, nil
	}
	return planFromLists(ctx, tx, ws, q, &dfCache{})
}

// Writers at once, on both engines — creating, rewriting, deleting,
// restoring and moving pages that share words — leave the postings index
// exactly what the pages hold, and searches from it rank as scoring every
// page does. On PostgreSQL the writers are concurrent transactions: two
// rewriting one list must not drop each other's pages.
func TestPostingsIndexUnderConcurrentWriters(t *testing.T) {
	// Pages wait beside the lists until a few are pending, or until many
	// are: both ways, and the folds in between, must keep the index exact.
	for _, pending := range []int{3, 1000} {
		t.Run(fmt.Sprintf("pending=%d", pending), func(t *testing.T) { testPostingsUnderConcurrentWriters(t, pending) })
	}
}

func testPostingsUnderConcurrentWriters(t *testing.T, pending int) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		db := storetest.MustOpen(t, e, &store.Options{PendingPages: pending})
		a := identitytest.Agent(t, identitytest.New(t, db), "t", "")
		ctx = atrium.NewContextWithActor(ctx, a)
		svc := New(db, nil)
		words := strings.Fields("plan storage migration review team budget release alpha beta notes")
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := range 8 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 7))
				// Frontmatter fields, and titles from an H1 or from the
				// file's name (which a move changes): the store derives
				// which lists hold a page from all of them.
				text := func() string {
					var b strings.Builder
					word := func() string { return words[r.IntN(len(words))] }
					if r.IntN(2) == 0 {
						fmt.Fprintf(&b, "---\ntags: [%s, %s]\naliases: [%s]\nsummary: %s %s\nowner: %s\n---\n", word(), word(), word(), word(), word(), word())
					}
					if r.IntN(3) > 0 {
						fmt.Fprintf(&b, "# %s %s\n\n", word(), word())
					}
					fmt.Fprintf(&b, "## %s\n\n", word())
					for range 5 + r.IntN(30) {
						b.WriteString(words[r.IntN(len(words))] + " ")
					}
					return b.String()
				}
				for i := range 25 {
					p := fmt.Sprintf("W%d/Page %d.md", w, r.IntN(6))
					var err error
					switch op := r.IntN(10); {
					case op < 6:
						_, err = svc.WritePage(ctx, WriteRequest{Path: p, Content: text(), Overwrite: true})
					case op < 8:
						_, err = svc.DeletePage(ctx, p)
					case op < 9:
						_, err = svc.RestorePage(ctx, RestoreRequest{Path: p})
					default:
						_, err = svc.MovePage(ctx, p, fmt.Sprintf("W%d/Moved %d.md", w, i))
					}
					if err != nil && atrium.ErrorCode(err) != atrium.ENotFound && atrium.ErrorCode(err) != atrium.EConflict {
						errs <- fmt.Errorf("writer %d op %d on %s: %w", w, i, p, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		checkPostingsRank(t, ctx, db, "after the writers", []int{1, 5, 100}, "plan review", "storage migration team budget release alpha", "+notes beta -plan", "alpha",
			// Prefixes whose lists hold only words they begin.
			"+alph* releas*", "migr* bet*", "stor* -plan*", "revie* +team budg*",
			// Phrases.
			`"plan review"`, `"storage migration" team -"plan review"`, `+beta "alpha release" migr*`)
		// Phrases and prefixes, whose pages the lists' positions and the
		// workspace's words find.
		checkMatchesEveryPage(t, ctx, db, "after the writers", `"plan review"`, "stor* -"+`"team budget"`, "+alph* releas*", "migrat* bet*", `-"notes beta" revie*`)
	})
}

// checkPostingsRank fails t unless the workspace's postings index is what
// its pages hold and ranks each query's top k as scoring every matching
// page does.
func checkPostingsRank(t *testing.T, ctx context.Context, db *store.DB, stage string, ks []int, queries ...string) {
	t.Helper()
	ws := atrium.ActorFromContext(ctx).Workspace.ID
	err := db.View(ctx, func(tx *store.Tx) error {
		if err := tx.CheckPostings(ctx, ws); err != nil {
			return err
		}
		for _, query := range queries {
			q, err := search.ParseQuery(query)
			if err != nil {
				return err
			}
			for _, k := range ks {
				f := store.CandidateFilter{IncludePrivate: true}
				rk, err := newRanking(ctx, tx, ws, q, &dfCache{})
				if err != nil {
					return err
				}
				t1, t2 := newTopK(k), newTopK(k)
				var r1, r2 SearchResult
				if err := rk.rankAll(ctx, f, t1, &r1); err != nil {
					return err
				}
				plan, ok, err := testPlan(ctx, tx, ws, q)
				if err != nil {
					return err
				}
				if !ok {
					t.Errorf("%s: %q does not rank from the lists", stage, query)
					continue
				}
				if _, err := rankPostings(ctx, tx, ws, plan, 0, f, t2, &r2); err != nil {
					return err
				}
				if diff := cmp.Diff(t1.sorted(), t2.sorted(), cmp.AllowUnexported(hit{})); diff != "" || r1.Total != r2.Total || r1.Total == 0 {
					t.Errorf("%s: %q top %d: totals %d vs %d; (-all +postings):\n%s", stage, query, k, r1.Total, r2.Total, diff)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", stage, err)
	}
}

// Pages rewritten or deleted after the lists took them in wait beside the
// lists with their old postings still there: searches must see them as they
// are now, and the fold that takes them in must leave the lists exact.
func TestPendingPagesSupersedeTheirLists(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		db := storetest.MustOpen(t, e, &store.Options{PendingPages: 10})
		a := identitytest.Agent(t, identitytest.New(t, db), "t", "")
		ctx = atrium.NewContextWithActor(ctx, a)
		svc := New(db, nil)
		write := func(path, content string) {
			t.Helper()
			if _, err := svc.WritePage(ctx, WriteRequest{Path: path, Content: content, Overwrite: true}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 30 { // three folds
			write(fmt.Sprintf("P%02d.md", i), fmt.Sprintf("# Page %d\n\nstorage migration plan %s\n", i, strings.Repeat("review ", i%4)))
		}
		check := func(stage string) {
			t.Helper()
			checkPostingsRank(t, ctx, db, stage, []int{50}, "storage review", "budget", "plan -budget", "+migration team")
		}
		// Rewritten (other words, or the same words elsewhere) and deleted:
		// all pending, over lists that still hold them as they were.
		write("P03.md", "# Page 3\n\nthe team budget\n")
		write("P04.md", "# Page 4\n\nreview review storage, then the storage migration plan\n")
		write("P05.md", "# Page 5\n\nbudget team migration\n")
		for _, p := range []string{"P06.md", "P07.md"} {
			if _, err := svc.DeletePage(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := svc.RestorePage(ctx, RestoreRequest{Path: "P07.md"}); err != nil {
			t.Fatal(err)
		}
		var waiting int
		if err := db.View(ctx, func(tx *store.Tx) error {
			var err error
			waiting, err = tx.PendingCount(ctx, a.Workspace.ID)
			return err
		}); err != nil || waiting != 5 {
			t.Fatalf("pending pages: %d %v; the test no longer tests pages waiting over their lists", waiting, err)
		}
		check("pending")
		for i := range 5 { // a fold
			write(fmt.Sprintf("P%02d.md", 10+i), "# Again\n\nbudget plan\n")
		}
		check("folded")
	})
}

// Phrases and prefixes take their candidates from the postings lists, which
// are by stem while a prefix matches words as written ("runn*" finds
// "running", whose stem is "run", and not "run"): a search finds exactly
// the pages that Match accepts when it reads every page, private ones only
// for members, on both engines, with pages waiting beside the lists or
// folded into them, before and after they are rewritten and deleted.
func TestPhrasesAndPrefixesFindWhatMatchAccepts(t *testing.T) {
	for _, pending := range []int{2, 1000} {
		t.Run(fmt.Sprintf("pending=%d", pending), func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, e store.Engine) {
				ctx := context.Background()
				db := storetest.MustOpen(t, e, &store.Options{PendingPages: pending})
				a := identitytest.Agent(t, identitytest.New(t, db), "t", "")
				ctx = atrium.NewContextWithActor(ctx, a)
				ws := a.Workspace.ID
				svc := New(db, nil)
				write := func(path, content string) {
					t.Helper()
					if _, err := svc.WritePage(ctx, WriteRequest{Path: path, Content: content, Overwrite: true}); err != nil {
						t.Fatal(err)
					}
				}
				write("Run.md", "---\naccess: public\n---\n# Run\n\nWe run the happy path.\n")
				write("Running.md", "---\naccess: public\n---\n# Notes\n\nRunning late, the runner was happy.\n")
				write("Happiness.md", "# Happiness\n\nHappiness is a happy run.\n")
				write("Private.md", "# Private\n\nrunning happiness runs\n")
				write("Tagged.md", "---\ntags: [running]\naccess: public\n---\nnothing else\n")
				queries := []string{"runn*", "run*", "happ*", "happi*", "runn* -happy", "run -runn*", `"happy run"`, `"happy path" runn*`,
					`-"happy run" run*`, "+runn* happ*", "ru* ha*", "zz*", `"run the"`}
				if n := checkMatchesEveryPage(t, ctx, db, "written", queries...); n == 0 {
					t.Error("no query ranked from the lists: the test misses that path")
				}
				write("Running.md", "---\naccess: public\n---\n# Notes\n\nWe ran; the runners were happier.\n")
				if _, err := svc.DeletePage(ctx, "Happiness.md"); err != nil {
					t.Fatal(err)
				}
				checkMatchesEveryPage(t, ctx, db, "rewritten and deleted", queries...)
				if err := db.View(ctx, func(tx *store.Tx) error { return tx.CheckPostings(ctx, ws) }); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// Past maxVerified unsure pages, a prefix's total is estimated from those
// read, says so, and stays between the pages sure to match and every
// candidate; the hits themselves are still each matched.
func TestPrefixTotalPastTheVerifiedPagesIsEstimated(t *testing.T) {
	defer func(n int) { maxVerified = n }(maxVerified)
	maxVerified = 4
	ctx := context.Background()
	db := storetest.MustOpen(t, store.SQLite, nil)
	a := identitytest.Agent(t, identitytest.New(t, db), "t", "")
	ctx = atrium.NewContextWithActor(ctx, a)
	svc := New(db, nil)
	// "sessions" begins with "sessi", "sess" does not; both have the stem
	// "sess", so every page is unsure for "sessi*".
	for i := range 30 {
		word := "sessions"
		if i%3 == 0 {
			word = "sess"
		}
		if _, err := svc.WritePage(ctx, WriteRequest{Path: fmt.Sprintf("P%02d.md", i), Content: "# Page\n\n" + word + " here\n"}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := svc.Search(ctx, SearchRequest{Query: "sessi*", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 20 {
		t.Errorf("%d hits, want the 20 pages with %q", len(res.Hits), "sessions")
	}
	if res.Total < 0 || res.Total > 30 || !strings.Contains(res.Note, "the total is estimated") {
		t.Errorf("total %d, note %q: want an estimate between 0 and 30, said", res.Total, res.Note)
	}
	maxVerified = 1000
	if res, err = svc.Search(ctx, SearchRequest{Query: "sessi*", Limit: 50}); err != nil || res.Total != 20 || strings.Contains(res.Note, "estimated") {
		t.Errorf("with every unsure page read: total %d, note %q, err %v; want 20 exactly", res.Total, res.Note, err)
	}
}

// checkMatchesEveryPage fails t unless each query, ranked as the service
// ranks a query it cannot rank from the lists alone, finds exactly the
// pages that Match accepts when it reads every page of the workspace, and
// counts them so, for members and for others.
//
// It returns how many of the queries ranked from the lists alone too, which
// it checks the same way.
func checkMatchesEveryPage(t *testing.T, ctx context.Context, db *store.DB, stage string, queries ...string) (fromTheLists int) {
	t.Helper()
	ws := atrium.ActorFromContext(ctx).Workspace.ID
	for _, member := range []bool{true, false} {
		f := store.CandidateFilter{IncludePrivate: member}
		for _, query := range queries {
			q, err := search.ParseQuery(query)
			if err != nil {
				t.Fatal(err)
			}
			var got, want, fromLists []string
			planned := false
			err = db.View(ctx, func(tx *store.Tx) error {
				rk, err := newRanking(ctx, tx, ws, q, &dfCache{})
				if err != nil {
					return err
				}
				top := newTopK(1000)
				var res SearchResult
				if words, ok := onlyOptionalWords(q); ok {
					err = rk.rankByTerm(ctx, words, f, top, &res)
				} else {
					err = rk.rankAll(ctx, f, top, &res)
				}
				if err != nil {
					return err
				}
				for _, h := range top.sorted() {
					got = append(got, h.key)
				}
				if res.Total != len(got) {
					t.Errorf("%s: %q (member %v): total %d for %d hits", stage, query, member, res.Total, len(got))
				}
				// And from the lists alone, when they can rank it.
				plan, ok, err := testPlan(ctx, tx, ws, q)
				if err != nil {
					return err
				}
				if planned = ok; ok {
					top, res := newTopK(1000), SearchResult{}
					if _, err := rankPostings(ctx, tx, ws, plan, 0, f, top, &res); err != nil {
						return err
					}
					for _, h := range top.sorted() {
						fromLists = append(fromLists, h.key)
					}
					if res.Total != len(fromLists) {
						t.Errorf("%s: %q (member %v) from the lists: total %d for %d hits", stage, query, member, res.Total, len(fromLists))
					}
				}
				// Every page read and matched, as if there were no index.
				all, err := tx.FilterPages(ctx, ws, f)
				if err != nil {
					return err
				}
				docs, err := tx.SearchDocs(ctx, all)
				if err != nil {
					return err
				}
				for _, d := range docs {
					if _, ok := rk.match(d); ok {
						want = append(want, store.PathKey(d.Path))
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: %q (member %v) (-Match on every page +search):\n%s", stage, query, member, diff)
			}
			if planned {
				fromTheLists++
			}
			slices.Sort(fromLists)
			if diff := cmp.Diff(want, fromLists); planned && diff != "" {
				t.Errorf("%s: %q (member %v) (-Match on every page +from the lists):\n%s", stage, query, member, diff)
			}
		}
	}
	return fromTheLists
}
