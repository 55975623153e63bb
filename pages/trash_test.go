package pages_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// A deleted page goes to the trash whole, its path free at once; it comes
// back with its history and attachments; it leaves for good only when purged.
func TestDeletedPagesGoToTheTrash(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Notes/Gone.md", "# Gone\n\nfirst words about zebras\n")
		v.write(t, "Notes/Gone.md", "# Gone\n\nsecond words about zebras\n")
		v.write(t, "Links.md", "see [[Gone]]")
		if _, err := v.svc.AddAttachment(v.ctx, pages.AttachRequest{PagePath: "Notes/Gone.md", FileName: "z.txt", Data: []byte("zebra")}); err != nil {
			t.Fatal(err)
		}
		del, err := v.svc.DeletePage(v.ctx, "Notes/Gone.md")
		if err != nil {
			t.Fatal(err)
		}
		trashed := del.Page.UID

		// Gone from every view.
		_, err = v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Notes/Gone.md"})
		wantCode(t, err, atrium.ENotFound)
		if hits := searchPaths(t, v, "zebras"); len(hits) != 0 {
			t.Fatalf("search finds a trashed page: %v", hits)
		}
		if list, err := v.svc.ListPages(v.ctx, pages.ListRequest{Depth: 5, IncludePrivate: true}); err != nil || len(list.Entries) != 1 {
			t.Fatalf("list after delete = %+v, %v", list.Entries, err)
		}
		_, _, err = v.svc.Attachment(v.ctx, "Notes/assets/z.txt")
		wantCode(t, err, atrium.ENotFound)

		// But in the trash.
		tr, err := v.svc.Trash(v.ctx, pages.TrashRequest{})
		if err != nil || len(tr.Pages) != 1 || tr.Pages[0].Page.UID != trashed || tr.Pages[0].Attachments != 1 || tr.Pages[0].TrashedBy != "writer" {
			t.Fatalf("trash = %+v, %v", tr.Pages, err)
		}

		// The path is free: a new page there starts its own history.
		v.write(t, "Notes/Gone.md", "# Another\n")
		revs, err := v.svc.Revisions(v.ctx, "Notes/Gone.md", "", 10)
		if err != nil || len(revs.Revisions) != 1 {
			t.Fatalf("a new page at a trashed page's path has history %+v, %v", revs.Revisions, err)
		}
		if _, err := v.svc.AddAttachment(v.ctx, pages.AttachRequest{PagePath: "Notes/Gone.md", FileName: "z.txt", Data: []byte("other")}); err != nil {
			t.Fatalf("an attachment at a trashed attachment's path: %v", err)
		}

		// Restoring to the taken path is a conflict that changes nothing.
		_, err = v.svc.RestorePage(v.ctx, pages.RestoreRequest{PageID: trashed})
		wantCode(t, err, atrium.EConflict)
		_, err = v.svc.RestorePage(v.ctx, pages.RestoreRequest{PageID: trashed, To: "Notes/Gone again.md"})
		wantCode(t, err, atrium.EConflict) // its attachment's path is taken too
		if _, err := v.svc.DeletePage(v.ctx, "Notes/Gone.md"); err != nil {
			t.Fatal(err)
		}
		// The most recently deleted page at a path is the one restored by path.
		_, err = v.svc.RestorePage(v.readerCtx(t), pages.RestoreRequest{PageID: trashed})
		wantCode(t, err, atrium.EPermission)
		res, err := v.svc.RestorePage(v.ctx, pages.RestoreRequest{PageID: trashed, To: "Notes/Back.md"})
		if err != nil || res.Page.Path != "Notes/Back.md" || res.Page.Revision != 2 || res.Attachments != 1 {
			t.Fatalf("restore = %+v, %v", res, err)
		}
		back := v.read(t, "Notes/Back.md")
		if !strings.Contains(back.Content, "second words") {
			t.Fatalf("restored content = %q", back.Content)
		}
		if revs, err := v.svc.Revisions(v.ctx, "Notes/Back.md", "", 10); err != nil || len(revs.Revisions) != 2 {
			t.Fatalf("restored history = %+v, %v", revs.Revisions, err)
		}
		if hits := searchPaths(t, v, "zebras"); len(hits) != 1 || hits[0] != "Notes/Back.md" {
			t.Fatalf("search after restore = %v", hits)
		}
		if _, data, err := v.svc.Attachment(v.ctx, "Notes/assets/z.txt"); err != nil || string(data) != "zebra" {
			t.Fatalf("restored attachment = %q, %v", data, err)
		}

		// The other one is still in the trash; only an admin purges it.
		tr, err = v.svc.Trash(v.ctx, pages.TrashRequest{Path: "Notes/Gone.md"})
		if err != nil || len(tr.Pages) != 1 || tr.Pages[0].Page.UID == trashed {
			t.Fatalf("trash after restore = %+v, %v", tr.Pages, err)
		}
		other := tr.Pages[0].Page.UID
		_, err = v.svc.PurgePage(v.ctx, other)
		wantCode(t, err, atrium.EPermission)
		if _, err := v.svc.PurgePage(v.withRole(t, "boss", atrium.RoleAdmin), other); err != nil {
			t.Fatal(err)
		}
		_, err = v.svc.RestorePage(v.ctx, pages.RestoreRequest{PageID: other})
		wantCode(t, err, atrium.ENotFound)
		if tr, err := v.svc.Trash(v.ctx, pages.TrashRequest{}); err != nil || len(tr.Pages) != 0 {
			t.Fatalf("trash after purge = %+v, %v", tr.Pages, err)
		}
	})
}

func TestTrashIsPurgedAfterItsRetention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		var now atomic.Int64
		now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro())
		v := newEnv(t, storetest.MustOpen(t, e, &store.Options{Now: func() time.Time { return time.UnixMicro(now.Load()) }}))
		v.svc.TrashRetention = 24 * time.Hour
		v.write(t, "Old.md", "# Old")
		v.write(t, "Young.md", "# Young")
		if _, err := v.svc.DeletePage(v.ctx, "Old.md"); err != nil {
			t.Fatal(err)
		}
		now.Add((23 * time.Hour).Microseconds())
		if _, err := v.svc.DeletePage(v.ctx, "Young.md"); err != nil {
			t.Fatal(err)
		}
		now.Add((2 * time.Hour).Microseconds())
		n, err := v.svc.PurgeExpired(v.ctx)
		if err != nil || n != 1 {
			t.Fatalf("purged %d, %v; want 1", n, err)
		}
		tr, err := v.svc.Trash(v.ctx, pages.TrashRequest{})
		if err != nil || len(tr.Pages) != 1 || tr.Pages[0].Page.Path != "Young.md" {
			t.Fatalf("trash after the old page's retention = %+v, %v", tr.Pages, err)
		}
	})
}

// A retention of 0 keeps deleted pages until purged by hand, however old.
func TestTrashRetentionZeroKeepsPages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		var now atomic.Int64
		now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro())
		v := newEnv(t, storetest.MustOpen(t, e, &store.Options{Now: func() time.Time { return time.UnixMicro(now.Load()) }}))
		v.svc.TrashRetention = 0
		v.write(t, "Kept.md", "# Kept")
		if _, err := v.svc.DeletePage(v.ctx, "Kept.md"); err != nil {
			t.Fatal(err)
		}
		now.Add((10 * 365 * 24 * time.Hour).Microseconds())
		if n, err := v.svc.PurgeExpired(v.ctx); err != nil || n != 0 {
			t.Fatalf("purged %d, %v; want 0 with a retention of 0", n, err)
		}
		tr, err := v.svc.Trash(v.ctx, pages.TrashRequest{})
		if err != nil || len(tr.Pages) != 1 || tr.Pages[0].Page.Path != "Kept.md" {
			t.Fatalf("trash ten years on = %+v, %v", tr.Pages, err)
		}
	})
}

func searchPaths(t *testing.T, v *env, q string) []string {
	t.Helper()
	r, err := v.svc.Search(v.ctx, pages.SearchRequest{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Path)
	}
	return out
}

func (v *env) readerCtx(t *testing.T) context.Context {
	return v.withRole(t, "just-reads", atrium.RoleReader)
}

// A vault keeps its images in one folder, owned by whichever page is nearest;
// deleting that page must not send every image to the trash with it.
func TestTrashLeavesSharedFilesWithTheNextPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Home.md", "# Home\n\n![[logo.png]]\n")
		v.write(t, "Notes/Other.md", "# Other\n")
		if _, _, err := v.svc.AttachFile(v.ctx, "Attachments/logo.png", []byte("png")); err != nil {
			t.Fatal(err)
		}
		if _, err := v.svc.AddAttachment(v.ctx, pages.AttachRequest{PagePath: "Home.md", FileName: "own.txt", Data: []byte("mine")}); err != nil {
			t.Fatal(err)
		}
		res, err := v.svc.DeletePage(v.ctx, "Home.md")
		if err != nil || res.Attachments != 1 {
			t.Fatalf("delete = %+v, %v; want its own assets file only", res, err)
		}
		if _, data, err := v.svc.Attachment(v.ctx, "Attachments/logo.png"); err != nil || string(data) != "png" {
			t.Fatalf("the shared image after its owner's delete: %q, %v", data, err)
		}
		_, _, err = v.svc.Attachment(v.ctx, "assets/own.txt")
		wantCode(t, err, atrium.ENotFound)
	})
}

// Replicas purge the trash each on its own clock: at the same moment, they
// take different pages, and every page is purged, and announced, once.
func TestReplicasPurgeEachExpiredPageOnce(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.DSN(t, store.Postgres)
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro())
	opts := &store.Options{Conns: 4, Now: func() time.Time { return time.UnixMicro(now.Load()) }}
	a, err := store.Open(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.Open(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	v := newEnv(t, a)
	const n = 300
	for i := range n {
		p := fmt.Sprintf("Old/%d.md", i)
		v.write(t, p, "# Old")
		if _, err := v.svc.DeletePage(v.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	now.Add((48 * time.Hour).Microseconds())
	var purged [2]int
	var wg sync.WaitGroup
	for i, db := range []*store.DB{a, b} {
		svc := pages.New(db, nil)
		svc.TrashRetention = 24 * time.Hour
		wg.Go(func() {
			var err error
			if purged[i], err = svc.PurgeExpired(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if purged[0]+purged[1] != n {
		t.Errorf("the replicas purged %d and %d pages, %d in all; want %d", purged[0], purged[1], purged[0]+purged[1], n)
	}
	// Reading the log at once: what is committed is stamped first.
	if _, err := a.LatestEventSeq(ctx, atrium.ActorFromContext(v.ctx).Workspace.ID); err != nil {
		t.Fatal(err)
	}
	announced, after := 0, int64(0)
	for {
		var batch []atrium.Event
		err := a.View(ctx, func(tx *store.Tx) (err error) {
			batch, err = tx.EventsAfter(ctx, 0, after, 500)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range batch {
			if e.Kind == pages.EventPagePurged {
				announced++
			}
			after = e.Seq
		}
		if len(batch) < 500 {
			break
		}
	}
	if announced != n {
		t.Errorf("%d purges announced; want %d", announced, n)
	}
}
