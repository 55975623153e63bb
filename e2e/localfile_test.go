package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stdioProc is `atrium mcp` driven line by line, with its working folder
// chosen by the test.
type stdioProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, a JSON-RPC message a line
	exited chan error
	stderr *syncBuffer
}

func startStdio(t *testing.T, workDir string, env []string, args ...string) *stdioProc {
	t.Helper()
	p := &stdioProc{lines: make(chan string, 64), exited: make(chan error, 1), stderr: &syncBuffer{}}
	p.cmd = exec.Command(binary, append(args, "mcp")...)
	p.cmd.Dir = workDir
	p.cmd.Env = append(cleanEnv(), env...)
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.exited <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		checkServerLog(t, "atrium mcp", p.stderr)
		p.stdin.Close()
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
		}
	})
	return p
}

func (p *stdioProc) send(t *testing.T, msg string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, msg+"\n"); err != nil {
		t.Fatalf("write to atrium mcp: %v\n%s", err, p.stderr)
	}
}

// answer waits (10 s at most) for the response to request id.
func (p *stdioProc) answer(t *testing.T, id int) map[string]any {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("atrium mcp closed stdout before answering request %d\n%s", id, p.stderr)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("not JSON: %s", line)
			}
			if got, ok := m["id"].(float64); ok && int(got) == id {
				return m
			}
		case <-deadline:
			t.Fatalf("no answer to request %d in 10 s\n%s", id, p.stderr)
		}
	}
}

// waitExit waits (10 s at most) for the process to end.
func (p *stdioProc) waitExit(t *testing.T, why string) {
	t.Helper()
	go func() {
		for range p.lines {
		}
	}()
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		t.Fatalf("atrium mcp did not exit in 10 s after %s\n%s", why, p.stderr)
	}
}

func callLine(id int, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// toolError returns the {error, code} of a failed tool call, or fails.
func toolError(t *testing.T, m map[string]any) (msg, code string) {
	t.Helper()
	res, _ := m["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if res == nil || res["isError"] != true || sc == nil {
		t.Fatalf("want a tool error, got %v", m)
	}
	msg, _ = sc["error"].(string)
	code, _ = sc["code"].(string)
	return msg, code
}

// A file_path naming a FIFO (or anything but a regular file) is refused at
// once: opening a FIFO with no writer used to block that call forever, and
// the process then ignored SIGTERM. Both ways of ending a stdio server (a
// signal, stdin closing) must still work after such a call.
func TestAttachmentFromFIFOIsRefused(t *testing.T) {
	for _, end := range []string{"SIGTERM", "stdin closed"} {
		t.Run(end, func(t *testing.T) {
			work := t.TempDir()
			if err := syscall.Mkfifo(filepath.Join(work, "pipe.png"), 0o600); err != nil {
				t.Fatalf("mkfifo: %v", err)
			}
			if err := os.WriteFile(filepath.Join(work, "ok.png"), []byte("png"), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startStdio(t, work, []string{"ATRIUM_AGENT=fifo"}, "--data-dir", t.TempDir())
			p.send(t, initialize)
			p.answer(t, 1)
			p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			p.send(t, callLine(2, "write_page", map[string]any{"path": "Pics.md", "content": "# Pics"}))
			p.answer(t, 2)

			p.send(t, callLine(3, "add_attachment", map[string]any{"page_path": "Pics.md", "file_path": "pipe.png"}))
			msg, code := toolError(t, p.answer(t, 3))
			if code != "invalid_argument" || !strings.Contains(msg, "not a regular file") {
				t.Errorf("FIFO: %s (%s), want invalid_argument saying it is not a regular file", msg, code)
			}
			// The session goes on: a regular file still attaches.
			p.send(t, callLine(4, "add_attachment", map[string]any{"page_path": "Pics.md", "file_path": "ok.png"}))
			if m := p.answer(t, 4); fmt.Sprint(m["result"].(map[string]any)["isError"]) == "true" {
				t.Errorf("regular file: %v", m)
			}

			if end == "SIGTERM" {
				p.cmd.Process.Signal(syscall.SIGTERM)
			} else {
				p.stdin.Close()
			}
			p.waitExit(t, end)
		})
	}
}
