package pages

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSections(t *testing.T) {
	content := "---\ntags: [a]\n---\nIntro line.\n\n# Setup\n\n## Linux\n\nInstall it.\n\n## Mac\nBrew it.\n# Empty\n"
	got := Sections("Guide", content)
	want := []Section{
		{Heading: "", Line: 4, Text: "Guide\n\nIntro line."},
		{Heading: "Setup > Linux", Line: 8, Text: "Guide\nSetup > Linux\n\nInstall it."},
		{Heading: "Setup > Mac", Line: 12, Text: "Guide\nSetup > Mac\n\nBrew it."},
		{Heading: "Empty", Line: 14, Text: "Guide\nEmpty"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}
	if got := Sections("Only a title", ""); len(got) != 1 || got[0].Text != "Only a title" {
		t.Errorf("empty page: %+v", got)
	}
	long := ""
	for range 100 {
		long += "# H\n\nword word word\n\n"
	}
	if got := Sections("T", long+string(make([]byte, 5000))); len(got) != maxSections {
		t.Errorf("%d sections, want at most %d", len(got), maxSections)
	}
	for _, s := range Sections("T", "# H\n\n"+string(make([]byte, 3*maxSectionBytes))) {
		if len(s.Text) > maxSectionBytes {
			t.Errorf("a section of %d bytes", len(s.Text))
		}
	}
}

func TestQuantize(t *testing.T) {
	v := []float32{3, -4, 0, 1e-3}
	scale, q := quantize(v)
	var dot float64
	n := normalized(v)
	for i, b := range q {
		dot += float64(n[i]) * float64(int8(b)) * float64(scale)
	}
	if math.Abs(dot-1) > 0.01 {
		t.Errorf("self-similarity after quantizing = %v, want about 1", dot)
	}
	if s, _ := quantize([]float32{0, 0}); s != 0 {
		t.Errorf("zero vector scale %v", s)
	}
}

// Reciprocal rank fusion: a page both rankings hold beats either's first
// alone; equal scores go to the better lexical rank.
func TestFuse(t *testing.T) {
	lex := []hit{{id: 1, key: "a", score: 9}, {id: 2, key: "b", score: 5}, {id: 3, key: "c", score: 1}}
	vec := []vecHit{{page: 4, sim: 0.9}, {page: 3, sim: 0.8}, {page: 99, sim: 0.7}}
	got := fuse(lex, vec, map[int64]string{4: "d", 3: "c"}) // 99: deleted
	var order []int64
	for _, f := range got {
		order = append(order, f.id)
	}
	if diff := cmp.Diff([]int64{3, 1, 4, 2}, order); diff != "" {
		t.Errorf("fused order (-want +got):\n%s", diff)
	}
	if f := got[0]; f.lexRank != 3 || f.vecRank != 2 || math.Abs(f.score-(1.0/63+1.0/62)) > 1e-12 {
		t.Errorf("page 3 = %+v", f)
	}
	if f := got[2]; f.lexRank != 0 || f.vecRank != 1 {
		t.Errorf("page 4 = %+v", f)
	}
}

func TestNearestKeepsTheBestSectionPerPage(t *testing.T) {
	x := &vecIndex{dims: 2, pages: []int64{1, 1, 2, 3}, secs: []int32{0, 1, 0, 0}, scales: []float32{1.0 / 127, 1.0 / 127, 1.0 / 127, 1.0 / 127},
		data: []int8{0, 127, 127, 0, 90, 90, -127, 0}}
	got := x.nearest([]float32{1, 0}, 2, nil)
	if len(got) != 2 || got[0].page != 1 || got[0].section != 1 || got[1].page != 2 {
		t.Errorf("nearest = %+v, want page 1 by section 1, then page 2", got)
	}
	got = x.nearest([]float32{1, 0}, 5, func(id int64) bool { return id != 1 })
	if len(got) != 2 || got[0].page != 2 || got[1].page != 3 {
		t.Errorf("nearest without page 1 = %+v", got)
	}
}

// A large index ranks in two passes (signs, then exact): on vectors like a
// model's — clustered, high-dimensional — it finds what the exact scan
// finds at the top, in the same order among what it kept.
func TestNearestCoarsePassAgreesWithTheExactScan(t *testing.T) {
	const dims, topics = 384, 5
	rng := rand.New(rand.NewPCG(1, 2))
	centers := make([][]float32, topics)
	for c := range centers {
		centers[c] = make([]float32, dims)
		for j := range centers[c] {
			centers[c][j] = float32(rng.NormFloat64())
		}
	}
	near := func(c int, spread float64) []float32 {
		v := make([]float32, dims)
		for j := range v {
			v[j] = centers[c][j] + float32(spread*rng.NormFloat64())
		}
		return normalized(v)
	}
	x := &vecIndex{dims: dims}
	for i := range coarseRows + 1000 {
		scale, q := quantize(near(i%topics, 0.8))
		x.pages = append(x.pages, int64(i/2)) // two sections a page
		x.secs = append(x.secs, int32(i%2))
		x.scales = append(x.scales, scale)
		for _, b := range q {
			x.data = append(x.data, int8(b))
		}
	}
	x.buildSigns()
	if x.signs == nil {
		t.Fatal("no coarse pass for a large index")
	}
	exact := *x
	exact.signs = nil
	agree, total := 0, 0
	for c := range 20 {
		q := near(c%topics, 0.5)
		got, want := x.nearest(q, 10, nil), exact.nearest(q, 10, nil)
		in := map[int64]bool{}
		for _, h := range got {
			in[h.page] = true
		}
		for _, h := range want {
			total++
			if in[h.page] {
				agree++
			}
		}
		if len(got) == 0 || got[0] != want[0] {
			t.Errorf("question %d: coarse top %+v, exact top %+v", c, got[:min(1, len(got))], want[0])
		}
	}
	recall := float64(agree) / float64(total)
	t.Logf("recall of the exact top 10s: %.3f", recall)
	if recall < 0.9 {
		t.Errorf("the coarse pass kept %.2f of the exact top 10s, want ≥ 0.9", recall)
	}
}
