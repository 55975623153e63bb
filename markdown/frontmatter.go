package markdown

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

const bom = "\ufeff"

// Split separates YAML frontmatter from the body. Frontmatter is present when
// the content starts with a "---" line and a later "---" or "..." line closes
// it; fm is the text between the two lines and body what follows the closing
// line. Delimiter lines may end in \r\n and trailing blanks; a leading UTF-8
// byte order mark is dropped. Without frontmatter it returns ("", content, false).
func Split(content string) (fm, body string, ok bool) {
	s := strings.TrimPrefix(content, bom)
	first, rest, more := cutLine(s)
	if !more || first != "---" {
		return "", content, false
	}
	for pos := len(s) - len(rest); pos < len(s); {
		line, next, more := cutLine(s[pos:])
		if line == "---" || line == "..." {
			return s[len(s)-len(rest) : pos], next, true
		}
		if !more {
			break
		}
		pos = len(s) - len(next)
	}
	return "", content, false
}

// cutLine returns the first line of s without its line ending and trailing
// blanks, the text after the line ending, and whether there was one.
func cutLine(s string) (line, rest string, more bool) {
	line, rest, more = strings.Cut(s, "\n")
	return strings.TrimRight(line, " \t\r"), rest, more
}

// Join is the inverse of Split: it writes fm between "---" lines before body,
// or returns body alone when fm is empty. The delimiters use \r\n when fm does.
func Join(fm, body string) string {
	if fm == "" {
		return body
	}
	nl := newline(fm)
	if !strings.HasSuffix(fm, "\n") {
		fm += nl
	}
	return "---" + nl + fm + "---" + nl + body
}

func newline(s string) string {
	if strings.Contains(s, "\r\n") {
		return "\r\n"
	}
	return "\n"
}

// Frontmatter holds the keys Atrium understands. Everything else is kept in
// the YAML text and only listed in Keys.
type Frontmatter struct {
	Title  string
	Icon   string
	Tags   []string // from a YAML list or a comma-separated string: trimmed, deduplicated, in order
	Access string   // "public", "private", or "" when unset
	Keys   []string // every top-level key, in document order
	// Texts are the top-level keys whose value is text (a string, or a
	// list holding strings), with their strings, in document order: what
	// search reads of keys it has no field of its own for. Other values
	// (numbers, dates, mappings) are left out, never an error.
	Texts []KeyTexts
}

// KeyTexts is a frontmatter key and the strings of its value.
type KeyTexts struct {
	Key    string
	Values []string
}

// Access values.
const (
	AccessPublic  = "public"
	AccessPrivate = "private"
)

// ParseFrontmatter reads the YAML text of a page's frontmatter (as returned by
// Split). Empty text, or text with only comments, is an empty Frontmatter.
func ParseFrontmatter(fm string) (Frontmatter, error) {
	var f Frontmatter
	m, err := parseMapping(fm)
	if err != nil || m == nil {
		return f, err
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i].Value
		f.Keys = append(f.Keys, k)
		v := resolve(m.Content[i+1])
		if err := f.setField(k, v); err != nil {
			return Frontmatter{}, err
		}
		if texts := stringsOf(v); len(texts) > 0 {
			f.Texts = append(f.Texts, KeyTexts{k, texts})
		}
	}
	return f, nil
}

// stringsOf is the text of a string value, or the strings of a list.
func stringsOf(v *yaml.Node) []string {
	isText := func(n *yaml.Node) bool {
		return n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.TrimSpace(n.Value) != ""
	}
	switch {
	case isText(v):
		return []string{v.Value}
	case v.Kind == yaml.SequenceNode:
		var out []string
		for _, item := range v.Content {
			if item = resolve(item); isText(item) {
				out = append(out, item.Value)
			}
		}
		return out
	}
	return nil
}

// setField reads the value of a key Atrium knows into f; other keys are
// ignored.
func (f *Frontmatter) setField(key string, v *yaml.Node) (err error) {
	switch key {
	case "title":
		f.Title, err = scalarField(key, v)
	case "icon":
		f.Icon, err = scalarField(key, v)
	case "tags":
		f.Tags, err = tagsField(v)
	case "access":
		f.Access, err = accessField(v)
	}
	return err
}

// fieldError reports a bad value, naming its line when it has one (a value
// being set has none yet).
func fieldError(v *yaml.Node, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if v.Line > 0 {
		msg = fmt.Sprintf("frontmatter line %d: %s", v.Line, msg)
	}
	return &Error{Code: EInvalid, Message: msg}
}

// parseMapping parses fm and returns its top-level mapping, or nil when fm
// holds no value at all. It rejects anything a page could not be read back
// from: invalid YAML, a top level that is not a mapping, keys that are not
// plain scalars, and keys that appear twice.
func parseMapping(fm string) (*yaml.Node, error) {
	doc, err := parseYAML(fm)
	if err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := resolve(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, errorf(EInvalid, "frontmatter line %d: frontmatter must be a mapping of keys to values (\"title: My page\"), not %s", root.Line, kindName(root))
	}
	seen := make(map[string]int, len(root.Content)/2)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Kind != yaml.ScalarNode || k.Tag == "!!binary" {
			return nil, errorf(EInvalid, "frontmatter line %d: keys must be plain names, not %s", k.Line, kindName(k))
		}
		if k.Tag == "!!null" {
			// YAML reads "~:" or a lone "?" as a null key, which no decoder keeps.
			return nil, errorf(EInvalid, "frontmatter line %d: a key is missing; write entries as \"name: value\"", k.Line)
		}
		if line, dup := seen[k.Value]; dup {
			return nil, errorf(EInvalid, "frontmatter line %d: key %q appears twice (also on line %d); keep one", k.Line, k.Value, line)
		}
		seen[k.Value] = k.Line
	}
	return root, nil
}

// parseYAML parses fm into a node tree. The YAML parser is third-party code
// fed with user input: should it panic, the page is rejected and the server
// stays up.
func parseYAML(fm string) (doc yaml.Node, err error) {
	defer func() {
		if recover() != nil {
			err = errorf(EInvalid, "frontmatter is not valid YAML")
		}
	}()
	if err := yaml.Unmarshal([]byte(fm), &doc); err != nil {
		return doc, yamlError(err)
	}
	return doc, nil
}

// yamlError turns a YAML parser error ("yaml: line 3: did not find expected
// key") into a message that says where the problem is.
func yamlError(err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, text, ok := strings.Cut(rest, ": "); ok {
			return errorf(EInvalid, "frontmatter line %s: invalid YAML: %s", n, text)
		}
	}
	return errorf(EInvalid, "frontmatter is not valid YAML: %s", msg)
}

// resolve follows an alias (*name) to the node it refers to.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	default:
		return fmt.Sprintf("the value %q", n.Value)
	}
}

// scalarField reads title or icon. Any scalar is accepted as text, so that
// "title: 1984" means the string a person would expect; only lists and
// mappings are errors.
func scalarField(key string, v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode {
		return "", fieldError(v, "%s must be a string, not %s", key, kindName(v))
	}
	if v.Tag == "!!null" {
		return "", nil
	}
	return strings.TrimSpace(v.Value), nil
}

func tagsField(v *yaml.Node) ([]string, error) {
	var raw []string
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag != "!!null" {
			raw = strings.Split(v.Value, ",")
		}
	case yaml.SequenceNode:
		for i, item := range v.Content {
			item = resolve(item)
			if item.Kind != yaml.ScalarNode {
				return nil, fieldError(item, "tags must be a list of strings; item %d is %s", i+1, kindName(item))
			}
			if item.Tag != "!!null" {
				raw = append(raw, item.Value)
			}
		}
	default:
		return nil, fieldError(v, "tags must be a list of strings (tags: [a, b]) or a comma-separated string, not %s", kindName(v))
	}
	var tags []string
	for _, t := range raw {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return tags, nil
}

func accessField(v *yaml.Node) (string, error) {
	if v.Kind == yaml.ScalarNode {
		switch a := strings.ToLower(strings.TrimSpace(v.Value)); {
		case v.Tag == "!!null" || a == "":
			return "", nil
		case a == AccessPublic || a == AccessPrivate:
			return a, nil
		}
	}
	return "", fieldError(v, "access must be %q or %q, not %s", AccessPublic, AccessPrivate, kindName(v))
}

// SetFrontmatter sets top-level keys of the YAML text fm and returns the new
// text. A nil value deletes the key; new keys are appended (title, icon, tags
// and access first, then the others by name). Values may be strings, numbers,
// bools, []string, []any and map[string]any, nested as needed.
//
// Only the lines of the keys that change are rewritten: every other line,
// with its comments, blank lines, quoting and indentation, stays byte for
// byte. When the layout is too unusual for that (a flow mapping such as
// "{title: x}"), the whole mapping is re-encoded from the parsed YAML tree,
// which still keeps order and comments. The result is checked with
// ParseFrontmatter.
func SetFrontmatter(fm string, set map[string]any) (string, error) {
	keys := make([]string, 0, len(set))
	for k, v := range set {
		if strings.TrimSpace(k) == "" || !utf8.ValidString(k) {
			return "", errorf(EInvalid, "frontmatter keys must be non-empty text")
		}
		if err := checkValue(v, 0); err != nil {
			return "", errorf(EInvalid, "frontmatter key %q: %v", k, err)
		}
		if v != nil {
			// Check known keys here, so the message is about the value given.
			n, err := valueNode(v, nil)
			if err != nil {
				return "", err
			}
			if err := new(Frontmatter).setField(k, n); err != nil {
				return "", err
			}
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := keyRank(a), keyRank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	m, err := parseMapping(fm)
	if err != nil {
		return "", err
	}
	want, canCheck := expected(fm, keys, set)
	out, ok := editLines(fm, m, keys, set)
	if !ok || !canCheck || !sameValues(out, want) {
		// Either the line edit could not be done or it did not produce the
		// intended values: fall back to editing the tree.
		if out, err = editTree(fm, m, keys, set); err != nil {
			return "", err
		}
	}
	if _, err := ParseFrontmatter(out); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return "", errorf(EInvalid, "the frontmatter would not be valid after this change: %s", e.Message)
		}
		return "", err
	}
	return out, nil
}

func keyRank(k string) int {
	if i := slices.Index([]string{"title", "icon", "tags", "access"}, k); i >= 0 {
		return i
	}
	return 4
}

// checkValue accepts the value types SetFrontmatter promises to encode, so
// that nothing reaches the YAML encoder that it would panic on.
func checkValue(v any, depth int) error {
	if depth > 32 {
		return fmt.Errorf("value nested too deeply")
	}
	switch v := v.(type) {
	case string:
		if !utf8.ValidString(v) {
			return fmt.Errorf("value is not valid UTF-8 text")
		}
		return nil
	case []string:
		for _, e := range v {
			if err := checkValue(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return nil
	case []any:
		for _, e := range v {
			if err := checkValue(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		for k, e := range v {
			if err := checkValue(k, depth+1); err != nil {
				return err
			}
			if err := checkValue(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
}

// valueNode encodes v, carrying over what the reader of the old value would
// miss: its line comment, its quoting and its flow style.
func valueNode(v any, old *yaml.Node) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, errorf(EInvalid, "cannot encode frontmatter value: %v", err)
	}
	if old == nil {
		return &n, nil
	}
	n.LineComment = old.LineComment
	switch {
	case n.Kind == yaml.ScalarNode && old.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Style == 0:
		n.Style = old.Style & (yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle)
	case n.Kind == old.Kind && n.Kind != yaml.ScalarNode:
		n.Style |= old.Style & yaml.FlowStyle
	}
	return &n, nil
}

// encodePairs writes key/value pairs as a block mapping. fm is the text the
// pairs come from.
func encodePairs(fm string, pairs ...*yaml.Node) (string, error) {
	restore := protectAstral(fm, pairs)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.MappingNode, Content: pairs}); err != nil {
		return "", errorf(EInvalid, "cannot encode frontmatter: %v", err)
	}
	if err := enc.Close(); err != nil {
		return "", errorf(EInvalid, "cannot encode frontmatter: %v", err)
	}
	if buf.String() == "{}\n" {
		return "", nil
	}
	return restore(buf.String()), nil
}

// protectAstral works around yaml.v3 writing characters beyond the Basic
// Multilingual Plane, emoji included, as escapes ("\U0001F680"), which no one
// wants to read in a page's icon. It swaps each for a private-use character
// found nowhere in fm or the nodes, and returns the function that swaps them
// back in the encoded text.
func protectAstral(fm string, nodes []*yaml.Node) func(string) string {
	used := map[rune]bool{}
	for _, r := range fm {
		used[r] = true
	}
	walkNodes(nodes, func(n *yaml.Node) {
		for _, r := range n.Value + n.HeadComment + n.LineComment + n.FootComment {
			used[r] = true
		}
	})
	swap := map[rune]rune{}
	var pairs []string
	next := rune(0xE000)
	walkNodes(nodes, func(n *yaml.Node) {
		n.Value = strings.Map(func(r rune) rune {
			if r < 0x10000 {
				return r
			}
			if p, ok := swap[r]; ok {
				return p
			}
			for next <= 0xF8FF && used[next] {
				next++
			}
			if next > 0xF8FF {
				return r // out of placeholders: leave it escaped
			}
			swap[r] = next
			pairs = append(pairs, string(next), string(r))
			next++
			return swap[r]
		}, n.Value)
	})
	if len(pairs) == 0 {
		return func(s string) string { return s }
	}
	return strings.NewReplacer(pairs...).Replace
}

func walkNodes(nodes []*yaml.Node, f func(*yaml.Node)) {
	for _, n := range nodes {
		f(n)
		walkNodes(n.Content, f)
	}
}

// editLines applies set to the text of fm line by line. Each top-level key
// owns the lines from its own to the next key's, less trailing blank lines
// and unindented comments (those belong to what follows). It reports false
// when the mapping is not laid out one key per line at column 1.
func editLines(fm string, m *yaml.Node, keys []string, set map[string]any) (string, bool) {
	lines := strings.SplitAfter(fm, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	type owned struct {
		key, value *yaml.Node
		from, to   int // line indexes, to exclusive
	}
	var pairs []owned
	if m != nil {
		if m.Style&yaml.FlowStyle != 0 {
			return "", false
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k := m.Content[i]
			if k.Column != 1 || k.Line < 1 || k.Line > len(lines) || (len(pairs) > 0 && k.Line <= pairs[len(pairs)-1].from+1) {
				return "", false
			}
			pairs = append(pairs, owned{key: k, value: m.Content[i+1], from: k.Line - 1})
		}
		for i := range pairs {
			to := len(lines)
			if i+1 < len(pairs) {
				to = pairs[i+1].from
			}
			for to > pairs[i].from+1 && (strings.TrimSpace(lines[to-1]) == "" || strings.HasPrefix(lines[to-1], "#")) {
				to--
			}
			pairs[i].to = to
		}
	}
	nl := newline(fm)
	replace := make(map[int]string) // pair index -> new text
	var appended strings.Builder
	for _, k := range keys {
		i := slices.IndexFunc(pairs, func(p owned) bool { return p.key.Value == k })
		v := set[k]
		if i < 0 && v == nil {
			continue
		}
		var key, old *yaml.Node
		if i >= 0 {
			key, old = pairs[i].key, pairs[i].value
		}
		if v == nil {
			replace[i] = ""
			continue
		}
		text, err := encodePair(k, key, v, old)
		if err != nil {
			return "", false
		}
		text = strings.ReplaceAll(text, "\n", nl)
		if i >= 0 {
			replace[i] = text
		} else {
			appended.WriteString(text)
		}
	}
	var out strings.Builder
	next := 0
	for i, p := range pairs {
		text, ok := replace[i]
		if !ok {
			continue
		}
		out.WriteString(strings.Join(lines[next:p.from], ""))
		out.WriteString(text)
		next = p.to
	}
	out.WriteString(strings.Join(lines[next:], ""))
	if appended.Len() > 0 {
		if s := out.String(); s != "" && !strings.HasSuffix(s, "\n") {
			out.WriteString(nl)
		}
		out.WriteString(appended.String())
	}
	return out.String(), true
}

// encodePair renders one "key: value" entry, keeping the old key node (its
// quoting and line comment) when there is one.
func encodePair(name string, key *yaml.Node, v any, old *yaml.Node) (string, error) {
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}
	if key != nil {
		k = &yaml.Node{Kind: key.Kind, Style: key.Style, Tag: key.Tag, Value: key.Value, LineComment: key.LineComment}
	}
	val, err := valueNode(v, old)
	if err != nil {
		return "", err
	}
	return encodePairs("", k, val)
}

// editTree applies set to the parsed mapping and encodes all of it.
func editTree(fm string, m *yaml.Node, keys []string, set map[string]any) (string, error) {
	if m == nil {
		m = &yaml.Node{Kind: yaml.MappingNode}
	}
	for _, k := range keys {
		i := 0
		for i < len(m.Content) && m.Content[i].Value != k {
			i += 2
		}
		v := set[k]
		switch {
		case v == nil && i < len(m.Content):
			m.Content = slices.Delete(m.Content, i, i+2)
		case v == nil:
		case i < len(m.Content):
			n, err := valueNode(v, m.Content[i+1])
			if err != nil {
				return "", err
			}
			m.Content[i+1] = n
		default:
			n, err := valueNode(v, nil)
			if err != nil {
				return "", err
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, n)
		}
	}
	return encodePairs(fm, m.Content...)
}

// decoded is frontmatter as plain values with its key order, to compare what
// an edit produced with what it should have produced.
type decoded struct {
	keys   []string
	values map[string]any
}

func decode(fm string) (decoded, bool) {
	d := decoded{values: map[string]any{}}
	m, err := parseMapping(fm)
	if err != nil {
		return d, false
	}
	if m == nil {
		return d, true
	}
	if err := m.Decode(&d.values); err != nil {
		return d, false
	}
	for i := 0; i < len(m.Content); i += 2 {
		d.keys = append(d.keys, m.Content[i].Value)
	}
	return d, true
}

// expected returns what fm should decode to after set.
func expected(fm string, keys []string, set map[string]any) (decoded, bool) {
	d, ok := decode(fm)
	if !ok {
		return d, false
	}
	for _, k := range keys {
		v := set[k]
		if v == nil {
			delete(d.values, k)
			d.keys = slices.DeleteFunc(d.keys, func(s string) bool { return s == k })
			continue
		}
		// Round-trip through YAML so that, say, an int and the YAML int it
		// becomes compare equal.
		text, err := yaml.Marshal(map[string]any{k: v})
		if err != nil {
			return d, false
		}
		var one map[string]any
		if err := yaml.Unmarshal(text, &one); err != nil {
			return d, false
		}
		if !slices.Contains(d.keys, k) {
			d.keys = append(d.keys, k)
		}
		d.values[k] = one[k]
	}
	return d, true
}

func sameValues(fm string, want decoded) bool {
	got, ok := decode(fm)
	return ok && slices.Equal(got.keys, want.keys) && reflect.DeepEqual(got.values, want.values)
}
