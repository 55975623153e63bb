package agents

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/atrium-hq/atrium/tasks"
)

// firstPrompt is what a session's agent reads first: its instructions, then
// why it was started, then the task's context packet. It never starts with
// a bare "you were assigned".
func firstPrompt(ag Agent, why, packet string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are @%s, working in Atrium, the team's shared workspace. Atrium's MCP tools are configured for you as the server \"atrium\": use them to read the task, post status, ask questions (task_ask_question) and signal completion (task_signal_complete). Your working folder is your own ($AGENT_WORKSPACE); what you change there is committed on your branch when the session ends.\n\n", ag.Handle)
	fmt.Fprintf(&b, "Why you were started: %s.\n", why)
	if packet != "" {
		b.WriteString("\n")
		b.WriteString(packet)
	} else {
		b.WriteString("\nThere is no task for this session: wait for instructions in this terminal.\n")
	}
	return b.String()
}

// contextPacket is a task's context as the agent reads it: the task, its
// specs and plans with their content, its thread, and whom it waits on.
func contextPacket(c tasks.ContextOut) string {
	var b strings.Builder
	t := c.Issue
	fmt.Fprintf(&b, "# Task #%d: %s\n\nStatus: %s", t.Number, t.Title, t.Status)
	if t.Phase != "" {
		fmt.Fprintf(&b, " · phase %s", t.Phase)
	}
	if len(t.Labels) > 0 {
		fmt.Fprintf(&b, " · labels %s", strings.Join(t.Labels, ", "))
	}
	fmt.Fprintf(&b, "\nURL: %s\n", t.URL)
	if t.Body != "" {
		fmt.Fprintf(&b, "\n%s\n", t.Body)
	}
	for _, group := range []struct {
		name  string
		pages []tasks.LinkedPage
	}{{"Spec", c.Specs}, {"Plan", c.Plans}} {
		for _, p := range group.pages {
			if p.Missing {
				fmt.Fprintf(&b, "\n## %s %s (not written yet)\n", group.name, p.Path)
				continue
			}
			fmt.Fprintf(&b, "\n## %s %s\n\n%s\n", group.name, p.Path, p.Content)
		}
	}
	if len(c.Comments) > 0 {
		b.WriteString("\n## Thread\n")
		if c.Note != "" {
			fmt.Fprintf(&b, "\n(%s)\n", c.Note)
		}
		for _, cm := range c.Comments {
			fmt.Fprintf(&b, "\n@%s, %s:\n%s\n", cm.Author, cm.CreatedAt, cm.Body)
		}
	}
	if len(c.WaitingFor) > 0 {
		fmt.Fprintf(&b, "\nThe task waits on: @%s\n", strings.Join(c.WaitingFor, ", @"))
	}
	return b.String()
}

// plainText is terminal output without its escape sequences and carriage
// returns, for a listing's last lines.
func plainText(b []byte) string {
	var out bytes.Buffer
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == 0x1b: // ESC: skip the sequence
			if i+1 < len(b) && b[i+1] == '[' {
				i += 2
				for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
					i++
				}
			} else if i+1 < len(b) && b[i+1] == ']' { // OSC, to BEL or ST
				for i < len(b) && b[i] != 0x07 && !(b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\') {
					i++
				}
			} else {
				i++
			}
		case c == '\r', c < 0x20 && c != '\n' && c != '\t':
		default:
			out.WriteByte(c)
		}
	}
	return out.String()
}

// tail is the last n non-empty lines of s.
func tail(s string, n int) []string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, n)
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if l := strings.TrimRight(lines[i], " \t"); l != "" {
			out = append(out, l)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// readTail reads the last n bytes of a file.
func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(fi.Size()-n, 0)
	b := make([]byte, fi.Size()-off)
	_, err = f.ReadAt(b, off)
	return b, err
}
