package web_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/pages"
)

// Issue 23.9: an embed of a page's section (![[Note#Section]]) shows that
// section inline, read through the pages service as the viewer may read it:
// the viewer's workspace only, private pages for members only. A missing
// page or section, or a loop, shows as an embed that says so, never as an
// error page; the embedded text is rendered by the page's own rules.
func TestPageShowsEmbeddedSections(t *testing.T) {
	s := newSite(t)
	s.write(t, "Guides/Setup.md", "---\naccess: public\n---\n# Setup\n\nIntro.\n\n## Install\n\n"+
		"Run **make**, then [[Use|use it]] and read [the notes](notes/Install.md).\n\n<script>window.pwned=1</script>\n\n## Use\n\nAfter.\n")
	s.write(t, "Guides/Use.md", "# Use\n")
	s.write(t, "Secret.md", "# Secret\n\nThe private words.\n")
	s.write(t, "Loop.md", "# Loop\n\n![[Loop]]\n")
	s.write(t, "Notes/Host.md", "---\naccess: public\n---\n# Host\n\n![[Setup#Install]]\n\n![[Secret]]\n\n![[Theirs]]\n\n![[Setup#Gone]]\n\n![[Loop]]\n")

	// Another workspace holds a page called Theirs: no embed reaches it.
	if _, err := s.ids.CreateWorkspace(s.ctx, "other", "dede"); err != nil {
		t.Fatal(err)
	}
	secret, _, err := s.ids.CreateToken(context.Background(), identity.TokenRequest{Principal: "dede", Workspace: "other", Role: atrium.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.ids.Authenticate(context.Background(), secret, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.docs.WritePage(atrium.NewContextWithActor(context.Background(), other), pages.WriteRequest{Path: "Theirs.md", Content: "# Theirs\n\nTheir words.\n"}); err != nil {
		t.Fatal(err)
	}

	code, body := s.get("/pages/Notes/Host.md")
	if code != 200 {
		t.Fatalf("page: %d\n%.800s", code, body)
	}
	for _, want := range []string{
		`<div class="embed"><p class="embed-title"><a class="wikilink" href="/pages/Guides/Setup.md#install">Setup &gt; Install</a></p>`,
		"<h2>Install</h2>", "<strong>make</strong>",
		`<a class="wikilink" href="/pages/Guides/Use.md">use it</a>`, // resolved from Setup's links
		`<a href="../Guides/notes/Install.md">the notes</a>`,         // relative to the page shown
		"The private words.", // a member reads private pages
		`<p class="embed-note">No page is called “Theirs” yet.</p>`,
		`<p class="embed-note">Setup has no section “Gone”.</p>`,
		`<p class="embed-note">Not shown: it would embed “Loop” in itself.</p>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s:\n%s", want, body)
		}
	}
	for _, bad := range []string{"Their words", "After.", "Intro.", "<script>window"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page shows %q:\n%s", bad, body)
		}
	}

	// The anonymous read the public page and the public section, and nothing
	// of the private page.
	code, body = s.do("GET", "/pages/Notes/Host.md", nil, nil, true)
	if code != 200 || !strings.Contains(body, "<strong>make</strong>") {
		t.Fatalf("anonymous page: %d\n%.800s", code, body)
	}
	if strings.Contains(body, "The private words.") || strings.Contains(body, "Their words") {
		t.Errorf("an anonymous reader sees a private or another workspace's page:\n%s", body)
	}

	// The preview and Markdown that is no page (a task's body) show embeds
	// the same way.
	form := url.Values{"content": {"# Draft\n\n![[Setup#Install]]\n"}, "base_revision": {"0"}, "action": {"preview"}}
	if code, _, body := s.answer("POST", "/preview/Notes/Draft.md", form); code != 200 || !strings.Contains(body, "<strong>make</strong>") {
		t.Errorf("the preview does not show the embed: %d\n%s", code, body)
	}
}
