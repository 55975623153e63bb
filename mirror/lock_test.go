package mirror_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mirror"
	"github.com/atrium-hq/atrium/store/storetest"
)

// Two mirrors of one folder would take each other's writes for edits: the
// second is refused with an error that says why and who holds the folder,
// by whatever path it names the folder; after the first stops, it may start.
func TestOneMirrorPerFolder(t *testing.T) {
	v := newEnv(t, storetest.Engines[0])
	v.start()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(v.dir, link); err != nil {
		t.Fatal(err)
	}
	actor, err := v.ids.LocalActor(context.Background(), "second", "", atrium.KindAgent)
	if err != nil {
		t.Fatal(err)
	}
	second := func(dir string) (*mirror.Mirror, error) {
		return mirror.Start(context.Background(), mirror.Config{Dir: dir, Services: v.svc, Actor: actor})
	}
	for _, dir := range []string{v.dir, link} {
		m, err := second(dir)
		if err == nil {
			m.Close()
			t.Fatalf("a second mirror of %s started", dir)
		}
		if atrium.ErrorCode(err) != atrium.EConflict || !strings.Contains(err.Error(), "already mirrored") || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
			t.Errorf("second mirror of %s: %v", dir, err)
		}
	}
	v.stop()
	m, err := second(v.dir)
	if err != nil {
		t.Fatalf("after the first stopped: %v", err)
	}
	m.Close()
}
