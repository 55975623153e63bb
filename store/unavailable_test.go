package store_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// MustTmpfs mounts a tmpfs of size (e.g. "2m") on a new folder, unmounted
// when tb ends; it skips tb where mounting is not allowed (not root).
func MustTmpfs(tb testing.TB, size string) string {
	tb.Helper()
	dir := tb.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		tb.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	tb.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			tb.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file until the disk is full; removing it frees the space.
func fill(tb testing.TB, dir string) (free func()) {
	tb.Helper()
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()
	return func() {
		if err := os.Remove(name); err != nil {
			tb.Fatal(err)
		}
	}
}

// writeUntilFailure writes ever more until a write fails: the WAL may hold
// a few small writes on a full disk.
func writeUntilFailure(t *testing.T, db *store.DB) error {
	t.Helper()
	big := strings.Repeat("x", 64<<10)
	for i := range 200 {
		err := db.Update(context.Background(), func(tx *store.Tx) error {
			return tx.SetMeta(context.Background(), "fill."+string(rune('a'+i%26))+strings.Repeat("-", i/26), big)
		})
		if err != nil {
			return err
		}
	}
	t.Fatal("200 writes of 64 KiB succeeded on a full disk")
	return nil
}

func mustWrite(t *testing.T, db *store.DB) error {
	return db.Update(context.Background(), func(tx *store.Tx) error {
		return tx.SetMeta(context.Background(), "probe.test", time.Now().String())
	})
}

func wantUnavailable(t *testing.T, err error, words string) {
	t.Helper()
	if atrium.ErrorCode(err) != atrium.EUnavailable || !strings.Contains(atrium.ErrorMessage(err), words) {
		t.Fatalf("err = %v (code %s); want unavailable saying %q", err, atrium.ErrorCode(err), words)
	}
	if d := atrium.ErrorDetails(err); d["retryable"] != true {
		t.Errorf("details = %v; want retryable", d)
	}
}

// waitPing waits until Ping reports want (nil or not).
func waitPing(t *testing.T, db *store.DB, healthy bool) error {
	t.Helper()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = db.Ping(context.Background()); (err == nil) == healthy {
			return err
		}
	}
	t.Fatalf("Ping = %v; want healthy=%v", err, healthy)
	return nil
}

func TestDiskFullIsUnavailable(t *testing.T) {
	dir := MustTmpfs(t, "16m")
	db, err := store.Open(context.Background(), filepath.Join(dir, "atrium.db"), &store.Options{Conns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	free := fill(t, dir)
	wantUnavailable(t, writeUntilFailure(t, db), "the disk is full")
	wantUnavailable(t, waitPing(t, db, false), "the disk is full")
	free()
	waitPing(t, db, true)
	if err := mustWrite(t, db); err != nil {
		t.Fatalf("write after freeing the disk: %v", err)
	}
}

// proxy forwards a local port to PostgreSQL; stop cuts every connection and
// closes the port, as a server that went away; start opens it again.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func (p *proxy) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
}

func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func TestPostgresGoneIsUnavailable(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: "127.0.0.1:0", target: u.Host}
	p.start(t)
	t.Cleanup(p.stop)
	u.Host = p.addr
	db, err := store.Open(context.Background(), u.String(), &store.Options{Conns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := mustWrite(t, db); err != nil {
		t.Fatal(err)
	}
	p.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var werr error
	for range 3 { // a pooled connection that died answers once with its own error
		if werr = db.Update(ctx, func(tx *store.Tx) error { return tx.SetMeta(ctx, "k", "v") }); atrium.ErrorCode(werr) == atrium.EUnavailable {
			break
		}
	}
	wantUnavailable(t, werr, "cannot be reached")
	if errors.Is(werr, context.DeadlineExceeded) {
		t.Fatal("the write waited for its deadline")
	}
	wantUnavailable(t, waitPing(t, db, false), "cannot be reached")
	p.start(t) // the same port again
	waitPing(t, db, true)
	if err := mustWrite(t, db); err != nil {
		t.Fatalf("write once PostgreSQL is back: %v", err)
	}
}
