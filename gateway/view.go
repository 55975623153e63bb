package gateway

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A view is what the gateway exposes at one moment, built from every
// upstream's last lists: the tools by exposed name, those held back (by the
// name they would have had) and the prompts. It is replaced whole, so that a
// call always sees one consistent view.
type view struct {
	tools       map[string]*entry
	order       []string
	held        map[string]*entry
	heldBy      map[string][]Held // per server
	prompts     map[string]*promptEntry
	promptOrder []string
	// resources by URI and templates by URI template, as their servers
	// name them: a URI is an address, and renaming it would break every
	// link to it.
	resources     map[string]*resourceEntry
	resourceOrder []string
	templates     map[string]*templateEntry
	templateOrder []string
	sig           string // compares views: changed only when this differs
}

type resourceEntry struct {
	up  *upstream
	def *mcp.Resource
}

type templateEntry struct {
	up  *upstream
	def *mcp.ResourceTemplate
}

// ownScheme is the URI scheme of Atrium's own resources: an upstream's
// resource there would shadow a page.
const ownScheme = "atrium:"

type entry struct {
	up   *upstream
	tool *mcp.Tool // as the upstream lists it
	def  *mcp.Tool // the same, under the exposed name
	held string    // why it is held back, for held entries
}

type promptEntry struct {
	up     *upstream
	prompt *mcp.Prompt
	def    *mcp.Prompt
}

// Held is a tool Atrium does not expose, and why.
type Held struct {
	Tool   string `json:"tool" jsonschema:"the tool's name on its server"`
	Name   string `json:"name" jsonschema:"the name it would have in Atrium"`
	Reason string `json:"reason" jsonschema:"why it is held back"`
}

// rebuild makes the view from the upstreams' current lists and, when what
// is exposed changed, tells OnChange. Collisions are warnings naming both
// tools, never a failure: the first server by name keeps the name.
func (g *Gateway) rebuild() {
	reserved, onChange := g.hooks()
	g.viewMu.Lock()
	v := newView()
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	for _, u := range g.sortedUpstreams() {
		u.mu.Lock()
		tools, prompts, resources, templates, state := u.tools, u.prompts, u.resources, u.templates, u.state
		u.mu.Unlock()
		if closed || state == Stopped || u.spec == nil {
			continue
		}
		for _, t := range tools {
			name := exposedName(u.name, t.Name)
			hold := func(why string) {
				v.heldBy[u.name] = append(v.heldBy[u.name], Held{Tool: t.Name, Name: name, Reason: why})
				if v.held[name] == nil {
					v.held[name] = &entry{up: u, tool: t, held: why}
				}
			}
			if why := holdBack(t, u.spec.Allow); why != "" {
				hold(why)
				continue
			}
			if reserved(name) {
				hold(fmt.Sprintf("its name %s is one of Atrium's own tools", name))
				continue
			}
			if prev := v.tools[name]; prev != nil {
				why := fmt.Sprintf("its name %s is taken by tool %s of server %s", name, prev.tool.Name, prev.up.name)
				v.heldBy[u.name] = append(v.heldBy[u.name], Held{Tool: t.Name, Name: name, Reason: why})
				continue
			}
			def := *t
			def.Name = name
			v.tools[name] = &entry{up: u, tool: t, def: &def}
			v.order = append(v.order, name)
		}
		for _, p := range prompts {
			name := exposedName(u.name, p.Name)
			if v.prompts[name] != nil {
				continue
			}
			def := *p
			def.Name = name
			v.prompts[name] = &promptEntry{up: u, prompt: p, def: &def}
			v.promptOrder = append(v.promptOrder, name)
		}
		for _, r := range resources {
			if prev := v.resources[r.URI]; prev != nil || strings.HasPrefix(r.URI, ownScheme) {
				continue // the first server by name keeps a URI; Atrium keeps its own
			}
			v.resources[r.URI] = &resourceEntry{up: u, def: r}
			v.resourceOrder = append(v.resourceOrder, r.URI)
		}
		for _, t := range templates {
			if prev := v.templates[t.URITemplate]; prev != nil || strings.HasPrefix(t.URITemplate, ownScheme) {
				continue
			}
			v.templates[t.URITemplate] = &templateEntry{up: u, def: t}
			v.templateOrder = append(v.templateOrder, t.URITemplate)
		}
	}
	v.sig = signature(v)
	old := g.view.Swap(v)
	g.viewMu.Unlock()
	if old.sig == v.sig {
		return
	}
	g.changed()
	g.logHeld(old, v)
	for _, fn := range onChange {
		fn()
	}
}

// logHeld logs the tools newly held back, with why (004: "notify on startup
// which tools were blocked"), and collisions as warnings.
func (g *Gateway) logHeld(old, v *view) {
	seen := map[string]bool{}
	for _, hs := range old.heldBy {
		for _, h := range hs {
			seen[h.Name+"\x00"+h.Reason] = true
		}
	}
	for server, hs := range v.heldBy {
		for _, h := range hs {
			if seen[h.Name+"\x00"+h.Reason] {
				continue
			}
			if e := v.tools[h.Name]; e != nil && e.up.name != server || e != nil && e.tool.Name != h.Tool {
				g.log.Warn("gateway: tool name collision", "name", h.Name, "kept", e.up.name+"/"+e.tool.Name, "held", server+"/"+h.Tool)
				continue
			}
			g.log.Info("gateway: tool held back", "server", server, "tool", h.Tool, "reason", h.Reason)
		}
	}
}

func newView() *view {
	return &view{tools: map[string]*entry{}, held: map[string]*entry{}, heldBy: map[string][]Held{}, prompts: map[string]*promptEntry{},
		resources: map[string]*resourceEntry{}, templates: map[string]*templateEntry{}}
}

// signature is what clients see of a view: names and definitions.
func signature(v *view) string {
	type sig struct {
		Tools     []*mcp.Tool
		Prompts   []*mcp.Prompt
		Resources []*mcp.Resource
		Templates []*mcp.ResourceTemplate
		Held      map[string][]Held
	}
	s := sig{Held: v.heldBy}
	for _, n := range v.order {
		s.Tools = append(s.Tools, v.tools[n].def)
	}
	for _, n := range v.promptOrder {
		s.Prompts = append(s.Prompts, v.prompts[n].def)
	}
	for _, u := range v.resourceOrder {
		s.Resources = append(s.Resources, v.resources[u].def)
	}
	for _, u := range v.templateOrder {
		s.Templates = append(s.Templates, v.templates[u].def)
	}
	b, _ := json.Marshal(s)
	return string(b)
}
