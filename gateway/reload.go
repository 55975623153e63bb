package gateway

import (
	"reflect"
	"sync"

	"github.com/atrium-hq/atrium"
)

// Diff is what a reload changed, by server name.
type Diff struct {
	Added     []string `json:"added" jsonschema:"servers new in the file, now started"`
	Removed   []string `json:"removed" jsonschema:"servers gone from the file, now stopped"`
	Changed   []string `json:"changed" jsonschema:"servers whose configuration changed, now restarted"`
	Unchanged []string `json:"unchanged" jsonschema:"servers left running as they were"`
}

// Reload re-reads the file and applies it: servers added are started,
// removed ones stopped (their processes reaped), changed ones restarted;
// the others are not touched. An invalid file changes nothing.
func (g *Gateway) Reload() (Diff, error) {
	g.opMu.Lock()
	defer g.opMu.Unlock()
	d := Diff{Added: []string{}, Removed: []string{}, Changed: []string{}, Unchanged: []string{}}
	f, err := LoadFile(g.path)
	if err != nil {
		return d, err
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return d, atrium.Errorf(atrium.EUnavailable, "the gateway is shutting down")
	}
	var stop, start []*upstream
	for _, name := range f.Names() {
		old := g.upstreams[name]
		switch {
		case old == nil:
			d.Added = append(d.Added, name)
		case !reflect.DeepEqual(old.cfg, f.Servers[name]):
			d.Changed = append(d.Changed, name)
			stop = append(stop, old)
		default:
			d.Unchanged = append(d.Unchanged, name)
			continue
		}
		u := newUpstream(g, name, f.Servers[name])
		g.upstreams[name] = u
		start = append(start, u)
	}
	for _, u := range g.sortedLocked() {
		if _, ok := f.Servers[u.name]; !ok {
			d.Removed = append(d.Removed, u.name)
			stop = append(stop, u)
			delete(g.upstreams, u.name)
		}
	}
	g.mu.Unlock()
	// The old processes end before the new ones start: a server that holds
	// a port or a lock file must be able to take it again.
	var wg sync.WaitGroup
	for _, u := range stop {
		wg.Go(u.stop)
	}
	wg.Wait()
	for _, u := range start {
		u.start()
	}
	g.rebuild()
	g.changed()
	g.log.Info("gateway: reloaded", "file", g.path, "added", d.Added, "removed", d.Removed, "changed", d.Changed)
	return d, nil
}
