package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mustTmpfs mounts a small tmpfs (a disk that can fill up) on a new folder,
// unmounted when t ends; it skips where mounting needs a root it lacks.
func mustTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

func healthz(t *testing.T, srv *server) (int, map[string]string) {
	t.Helper()
	res, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]string
	json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

// A full disk is unavailable (503, retryable, "the disk is full"), not an
// internal error; /healthz says 503 while writes cannot commit and 200 again
// on its own once they can.
func TestDiskFullIsUnavailableAndUnhealthy(t *testing.T) {
	dir := mustTmpfs(t, "16m")
	srv := startServe(t, filepath.Join(dir, "atrium.db"))
	put := func(i int, content string) (int, string, http.Header) {
		body, _ := json.Marshal(map[string]string{"content": content})
		req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/api/pages/Full/%d.md", srv.URL, i), strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+srv.AdminToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res.Header
	}
	if code, body, _ := put(0, "# before\n"); code/100 != 2 {
		t.Fatalf("PUT before: %d %s", code, body)
	}
	if code, _ := healthz(t, srv); code != 200 {
		t.Fatalf("healthz before = %d", code)
	}
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for buf := make([]byte, 4096); ; {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()
	big := "# big\n\n" + strings.Repeat("words that fill the disk ", 4000) + "\n"
	var (
		code int
		body string
		hdr  http.Header
	)
	for i := 1; i < 100; i++ {
		if code, body, hdr = put(i, big); code/100 != 2 {
			break
		}
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"code":"unavailable"`) || !strings.Contains(body, "the disk is full") {
		t.Fatalf("PUT on a full disk: %d %s; want 503 unavailable saying the disk is full", code, body)
	}
	if hdr.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After")
	}
	if code, hb := healthz(t, srv); code != http.StatusServiceUnavailable || !strings.Contains(hb["reason"], "the disk is full") {
		t.Fatalf("healthz on a full disk = %d %v; want 503 with the reason", code, hb)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, _ := healthz(t, srv)
		if c == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz stayed %d after the disk was freed", c)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, body, _ := put(200, "# after\n"); code/100 != 2 {
		t.Fatalf("PUT after freeing the disk: %d %s", code, body)
	}
}
