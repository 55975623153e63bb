package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// screen is what the terminal shows: xterm's buffer, line by line.
const screen = `(() => { const b = window.atriumTerminal.buffer.active; const out = []; for (let i = 0; i < b.length; i++) out.push(b.getLine(i).translateToString(true)); while (out.length && out[out.length-1] === "") out.pop(); return out.join("\n"); })()`

// waitScreen waits until the terminal of b shows want.
func waitScreen(b *browser, what, want string) string {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := read(b, what, chromedp.Evaluate[string](screen))
		if strings.Contains(got, want) {
			return got
		}
		if time.Now().After(deadline) {
			b.artifacts(what)
			b.t.Fatalf("%s: the terminal shows %q, want %q in it", what, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// typeLine types text into the focused terminal as a person's keyboard
// would deliver it (one input per character run), then Enter.
func typeLine(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
			return err
		}),
		// Enter as one key press: a keyDown that also carries text would
		// reach the terminal twice (as the key, and as the text).
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
				if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13}); err != nil {
					return err
				}
			}
			return nil
		}),
	)
}

// A person starts an agent from /agents and lands on its live terminal;
// typing needs taking control; what they type reaches the process and its
// answer shows; a reload paints the same screen again, once; a second viewer
// sees who has control and cannot type.
func TestBrowserSessionTerminal(t *testing.T) {
	srv := startServe(t, "")
	b := newBrowser(t)
	b.do("sign in and add the agent as an admin",
		chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(srv.URL+"/admin/agents"), chromedp.WaitVisible(chromedp.CSS(`details.set-agent form`)),
		chromedp.SetValue(chromedp.CSS(`input[name="handle"]`), "echoer"),
		chromedp.SetValue(chromedp.CSS(`input[name="command"]`), "/bin/cat"),
		chromedp.Click(chromedp.CSS(`details.set-agent button`)),
		chromedp.WaitVisible(chromedp.CSS(`table.agents`)))
	if row := read(b, "the agent's row", chromedp.Text(chromedp.CSS(`table.agents tbody tr`))); !strings.Contains(row, "@echoer") || !strings.Contains(row, "/bin/cat") || !strings.Contains(row, "not connected") {
		t.Fatalf("the agents table shows %q", row)
	}
	b.do("start the agent",
		chromedp.Navigate(srv.URL+"/agents"), chromedp.WaitVisible(chromedp.CSS(`form.start-agent`)),
		chromedp.Click(chromedp.CSS(`form.start-agent button`)),
		chromedp.WaitVisible(chromedp.CSS(`#terminal .xterm`)))
	b.do("wait for the connection", chromedp.WaitVisible(chromedp.CSS(`#take-control:not([disabled])`)))
	if got := read(b, "status", chromedp.Text(chromedp.CSS("#terminal-status"))); !strings.Contains(got, "no one has control") {
		t.Fatalf("status %q, want that no one has control", got)
	}
	b.do("type without control", chromedp.Click(chromedp.CSS(`#terminal .xterm-screen`)), typeLine("ignored"))
	b.do("take control and type", chromedp.Click(chromedp.CSS(`#take-control`)),
		chromedp.WaitVisible(chromedp.CSS(`#take-control[disabled]`)), typeLine("hello atrium"))
	first := waitScreen(b, "the echo", "hello atrium\nhello atrium")
	if strings.Contains(first, "ignored") {
		t.Errorf("keys typed without control reached the process:\n%s", first)
	}
	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#take-control:not([disabled])`)))
	again := waitScreen(b, "the replay", "hello atrium")
	if again != first {
		t.Errorf("after a reconnect the terminal shows\n%q\nwant the same screen\n%q", again, first)
	}
	// A second viewer, in another browser: told who has control, cannot type.
	b.do("take control again", chromedp.Click(chromedp.CSS(`#take-control`)), chromedp.WaitVisible(chromedp.CSS(`#take-control[disabled]`)))
	other := newBrowser(t)
	loc := read(b, "location", chromedp.Location())
	other.do("open the same terminal", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(loc), chromedp.WaitVisible(chromedp.CSS(`#take-control:not([disabled])`)))
	if got := read(other, "status", chromedp.Text(chromedp.CSS("#terminal-status"))); !strings.Contains(got, "@admin has control") {
		t.Errorf("the second viewer's status is %q, want that @admin has control", got)
	}
	other.do("type as a viewer", chromedp.Click(chromedp.CSS(`#terminal .xterm-screen`)), typeLine("from the viewer"))
	b.do("type as the writer", chromedp.Click(chromedp.CSS(`#terminal .xterm-screen`)), typeLine("from the writer"))
	got := waitScreen(other, "the viewer sees the writer", "from the writer\nfrom the writer")
	if strings.Contains(got, "from the viewer") {
		t.Errorf("a viewer without control typed into the terminal:\n%s", got)
	}
}
