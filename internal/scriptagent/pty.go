package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The marker of an idle terminal agent, Claude Code's: a test (or Atrium)
// waits for it before it types.
const promptMarker = "❯ "

// Bracketed paste (what a terminal sends around pasted text): a pasted
// message of several lines is one prompt, not one a line.
const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// runPTY is the interactive terminal agent: the prompt on the command line
// first, then one prompt a line typed, until end of input or a rule exits.
func runPTY(ctx context.Context, a *agent, session, prompt string, in io.Reader, out io.Writer) error {
	fmt.Fprintf(out, "scriptagent @%s · session %s\n\n", a.handle, session)
	handle := func(text string) bool {
		t := a.respond(ctx, session, text,
			func(s *step) {
				args, _ := json.Marshal(s.args)
				fmt.Fprintf(out, "● %s %s\n", s.tool, args)
			},
			func(s *step) {
				text := strings.Join(strings.Fields(s.text), " ") // one line, however the result is laid out
				if r := []rune(text); len(r) > 200 {
					text = string(r[:200]) + "…"
				}
				if s.failed {
					text = "Error: " + text
				}
				fmt.Fprintf(out, "  ⎿  %s\n", text)
			})
		if t.reply != "" {
			fmt.Fprintf(out, "● %s\n", t.reply)
		}
		fmt.Fprintln(out)
		return t.exit
	}
	if prompt != "" {
		// Echoed as Claude Code shows a sent prompt, not with the marker,
		// which means idle.
		fmt.Fprintf(out, "> %s\n", firstLine(prompt))
		if handle(prompt) {
			return nil
		}
	}
	r := bufio.NewReader(in)
	for {
		fmt.Fprint(out, promptMarker)
		text, err := readPrompt(r)
		if strings.TrimSpace(text) != "" && handle(text) {
			return nil
		}
		if err != nil { // end of input (^D, or the terminal closed): the normal end
			fmt.Fprintln(out)
			return nil
		}
	}
}

// readPrompt reads one typed line, or a whole bracketed paste and the rest
// of the line where it ends.
func readPrompt(r *bufio.Reader) (string, error) {
	var b strings.Builder
	pasting := false
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if i := strings.Index(line, pasteStart); i >= 0 {
			pasting = true
			line = line[:i] + line[i+len(pasteStart):]
		}
		if i := strings.Index(line, pasteEnd); i >= 0 {
			pasting = false
			line = line[:i] + line[i+len(pasteEnd):]
		}
		b.WriteString(line)
		if !pasting || err != nil {
			return b.String(), err
		}
		b.WriteString("\n")
	}
}

// firstLine is how the first prompt is echoed: a task's context is long.
func firstLine(s string) string {
	line, _, more := strings.Cut(s, "\n")
	if more {
		line += " …"
	}
	return line
}
