package e2e

import (
	"slices"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// keystrokes types n keys into the page's terminal, one at a time, as the
// terminal's own input (xterm's input(), which goes out as typed keys do)
// and waits for each echo to be parsed onto the screen: browser, WebSocket,
// server, PTY and back. It answers each round trip in milliseconds.
const keystrokes = `(async (n) => {
  const t = window.atriumTerminal, out = [];
  for (let i = 0; i < n; i++) {
    const ch = String.fromCharCode(97 + i % 26);
    const echoed = new Promise(resolve => { const d = t.onWriteParsed(() => { d.dispose(); resolve(); }); });
    const t0 = performance.now();
    t.input(ch, true);
    await echoed;
    out.push(performance.now() - t0);
  }
  return out;
})`

// BenchmarkBrowserKeystrokeEcho measures keystroke to echo in Chromium, on
// a session of /bin/cat (the PTY echoes each key):
//
//	go test ./e2e -run '^$' -bench BrowserKeystrokeEcho -benchtime 200x
func BenchmarkBrowserKeystrokeEcho(b *testing.B) {
	srv := startServe(b, "")
	if out, errOut, code := srv.cli(b, nil, "agent", "add", "echoer", "--command", "/bin/cat"); code != 0 {
		b.Fatalf("agent add: %d\n%s%s", code, out, errOut)
	}
	br := newBrowser(b)
	br.do("sign in", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")))
	br.do("start the agent", chromedp.Navigate(srv.URL+"/agents"), chromedp.WaitVisible(chromedp.CSS(`form.start-agent`)),
		chromedp.Click(chromedp.CSS(`form.start-agent button`)), chromedp.WaitVisible(chromedp.CSS(`#terminal .xterm`)))
	br.do("take control", chromedp.WaitVisible(chromedp.CSS(`#take-control:not([disabled])`)),
		chromedp.Click(chromedp.CSS(`#take-control`)), chromedp.WaitVisible(chromedp.CSS(`#take-control[disabled]`)))
	b.ResetTimer()
	ms := read(br, "keystrokes", chromedp.Evaluate[[]float64](keystrokes+"("+strconv.Itoa(b.N)+")", chromedp.EvalAwaitPromise))
	b.StopTimer()
	slices.Sort(ms)
	b.ReportMetric(ms[len(ms)/2], "echo-p50-ms")
	b.ReportMetric(ms[len(ms)*95/100], "echo-p95-ms")
	b.ReportMetric(0, "ns/op")
}
