package search

import (
	"cmp"
	"slices"
	"strings"
)

// Synonyms are a workspace's own words: groups of words and phrases that
// mean the same to it, written one group a line ("recover, restore, get
// back, undelete"). Expand makes a question's word count wherever any word
// or phrase of its group stands.
type Synonyms struct {
	groups [][]Form
	// byFirst lists the forms starting with a stem, longest first.
	byFirst map[string][]formRef
}

type formRef struct{ group, form int }

// Limits on a synonyms page: every form of a group a question holds is a
// postings list to read.
const (
	maxSynonymGroups = 1000
	maxGroupForms    = 12
	maxFormWords     = 4
)

// ParseSynonyms reads the body of a synonyms page. Each line holding a
// comma is a group: its words and phrases separated by commas, a list
// marker ("- ", "* ", "1. ") before them allowed; other lines (headings,
// notes) and code blocks are left out. A word or phrase of two groups joins
// them into one. Forms of more than four words, single common words ("the",
// "how": see ParseQuery) and groups left with one form are dropped, as are
// groups past the first thousand and forms past a group's twelfth.
func ParseSynonyms(body string) *Synonyms {
	var groups [][]Form
	fence := false
	for line := range strings.Lines(body) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			fence = !fence
			continue
		}
		if fence || !strings.Contains(line, ",") || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ">") || strings.HasPrefix(line, "|") {
			continue
		}
		line = strings.TrimLeft(line, "-*+ ")
		if i := strings.Index(line, ". "); i > 0 && strings.Trim(line[:i], "0123456789") == "" {
			line = line[i+2:]
		}
		var g []Form
		for part := range strings.SplitSeq(line, ",") {
			// A form is its words as written (an identifier is one), and
			// the index's Terms of them, which a question's are matched to.
			words := Tokenize(part)
			if len(words) == 0 || len(words) > maxFormWords || len(words) == 1 && stopWords[words[0]] {
				continue
			}
			toks := Terms(part)
			fm := Form{Text: strings.Join(words, " "), Stems: make([]string, len(toks))}
			for i, t := range toks {
				fm.Stems[i] = Stem(t)
			}
			if !slices.ContainsFunc(g, func(o Form) bool { return slices.Equal(o.Stems, fm.Stems) }) {
				g = append(g, fm)
			}
		}
		if len(g) > 1 {
			groups = append(groups, g)
		}
	}
	return newSynonyms(joinGroups(groups))
}

// joinGroups merges the groups that share a form, in the order they come.
func joinGroups(groups [][]Form) [][]Form {
	key := func(f Form) string { return strings.Join(f.Stems, " ") }
	root := make([]int, len(groups)) // union–find over the groups
	for i := range root {
		root[i] = i
	}
	find := func(i int) int {
		for root[i] != i {
			i = root[i]
		}
		return i
	}
	first := map[string]int{} // form → the first group holding it
	for i, g := range groups {
		for _, f := range g {
			if j, ok := first[key(f)]; ok {
				a, b := find(i), find(j)
				root[max(a, b)] = min(a, b)
			} else {
				first[key(f)] = i
			}
		}
	}
	var out [][]Form
	at := map[int]int{} // root → index in out
	seen := map[string]bool{}
	for i, g := range groups {
		r := find(i)
		k, ok := at[r]
		if !ok {
			k = len(out)
			at[r] = k
			out = append(out, nil)
		}
		for _, f := range g {
			if !seen[key(f)] {
				seen[key(f)] = true
				out[k] = append(out[k], f)
			}
		}
	}
	return out
}

func newSynonyms(groups [][]Form) *Synonyms {
	s := &Synonyms{byFirst: map[string][]formRef{}}
	for _, g := range groups {
		if len(s.groups) == maxSynonymGroups {
			break
		}
		if len(g) > maxGroupForms {
			g = g[:maxGroupForms]
		}
		gi := len(s.groups)
		s.groups = append(s.groups, g)
		for fi, f := range g {
			s.byFirst[f.Stems[0]] = append(s.byFirst[f.Stems[0]], formRef{gi, fi})
		}
	}
	for _, refs := range s.byFirst {
		slices.SortStableFunc(refs, func(x, y formRef) int {
			return len(s.groups[y.group][y.form].Stems) - len(s.groups[x.group][x.form].Stems)
		})
	}
	return s
}

// Groups are the groups of words and phrases, each as the page writes them.
func (s *Synonyms) Groups() [][]string {
	if s == nil {
		return nil
	}
	out := make([][]string, len(s.groups))
	for i, g := range s.groups {
		for _, f := range g {
			out[i] = append(out[i], f.Text)
		}
	}
	return out
}

// Expand widens the optional words of q, parsed from question, with their
// synonyms. An optional word of a group becomes a term of every form of the
// group (two words of one group, one term); a phrase of a group that the
// question writes leaves its words as they are and adds a term of the
// group's other forms. Only queries that rank from postings are widened
// (RanksFromPostings): a prefix or a quoted phrase asks for what it says, as
// +required and -excluded words do.
func (s *Synonyms) Expand(q Query, question string) Query {
	if s == nil || len(s.groups) == 0 || !RanksFromPostings(q) {
		return q
	}
	var stems []string
	for _, t := range Terms(question) {
		stems = append(stems, Stem(t))
	}
	// The forms the question holds, longest first where they overlap.
	var found []formRef
	for i := 0; i < len(stems); {
		n := 1
		for _, r := range s.byFirst[stems[i]] {
			f := s.groups[r.group][r.form].Stems
			if len(f) <= len(stems)-i && slices.Equal(stems[i:i+len(f)], f) {
				found = append(found, r)
				n = len(f)
				break
			}
		}
		i += n
	}
	terms := slices.Clone(q.Terms)
	drop := make([]bool, len(terms))
	done := map[int]bool{}
	for _, r := range found {
		if done[r.group] {
			continue
		}
		done[r.group] = true
		g := s.groups[r.group]
		var own []int             // the question's optional words of the group
		written := map[int]bool{} // the group's phrases the question writes
		var name string
		for _, o := range found {
			if o.group != r.group {
				continue
			}
			f := g[o.form]
			if len(f.Stems) > 1 {
				written[o.form] = true
				name = cmp.Or(name, f.Text)
				continue
			}
			if i := slices.IndexFunc(terms, func(t Term) bool {
				return t.Text == f.Stems[0] && !t.Required && !t.Excluded && !t.Prefix && t.Phrase == nil && t.Forms == nil
			}); i >= 0 && !slices.Contains(own, i) {
				own = append(own, i)
			}
		}
		var forms []Form
		for k, f := range g {
			if !written[k] {
				forms = append(forms, f)
			}
		}
		switch {
		case len(own) > 0:
			// The first word written names the term, its own form first.
			t := &terms[own[0]]
			if k := slices.IndexFunc(forms, func(f Form) bool { return slices.Equal(f.Stems, []string{t.Text}) }); k > 0 {
				first := forms[k]
				forms = append([]Form{first}, slices.Delete(forms, k, k+1)...)
			}
			t.Forms = forms
			for _, i := range own[1:] {
				drop[i] = true
			}
		case name != "" && len(forms) > 0:
			terms = append(terms, Term{Text: name, Forms: forms})
			drop = append(drop, false)
		}
	}
	var out []Term
	for i, t := range terms {
		if !drop[i] {
			out = append(out, t)
		}
	}
	if len(out) > MaxTerms {
		return q
	}
	return Query{Terms: out}
}
