// Command scriptagent is a coding-agent CLI without a model: it follows a
// script. Atrium starts it in a session as it starts claude, codex or gemini,
// so that end-to-end tests can run flows of several agents — started, asked,
// woken by a message, done — unattended, the same every time, and offline.
//
// It talks to Atrium as a real agent does: over MCP (Streamable HTTP to
// ATRIUM_URL with ATRIUM_TOKEN), through the official go-sdk client, and
// to whoever drives it in one of three ways (--mode):
//
//   - stream-json: Claude Code's headless protocol (claude -p --input-format
//     stream-json --output-format stream-json --verbose), JSON lines both ways;
//   - acp: an Agent Client Protocol agent over stdio (coder/acp-go-sdk);
//   - pty (the default): an interactive terminal program, one prompt a line.
//
// The script (SCRIPTAGENT_SCRIPT or --script) is JSON:
//
//	{"rules":[{"match":"Why you were started","unless":"answered",
//	  "calls":[{"tool":"task_get_context","args":{"issue_number":"{task}"}}],
//	  "reply":"I read it.","exit":false}]}
//
// On every prompt the first rule whose match is in the prompt (and whose
// unless, if any, is not) makes its calls in order, replies, and ends the
// process if exit is set; an empty match fires on anything. With no rule the
// reply is "nothing to do". In every string of calls and reply, {task} is the
// task number (ATRIUM_TASK, else the first "Task #N" of the prompt, else the
// last one the conversation named; a value that is exactly "{task}" becomes
// a JSON number) and {agent} is ATRIUM_AGENT.
// A call that fails is shown as failed and the rule goes on: a test scripts
// an agent that meets an error as easily as one that does not.
//
// Each prompt is appended as one JSON line to SCRIPTAGENT_LOG when it is set,
// so a test can tell what each agent was told, and how many times.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
)

// usage is what --help prints; the flags Claude Code takes are accepted so
// that Atrium's claude preset can start scriptagent unchanged.
const usage = `usage: scriptagent [--mode pty|stream-json|acp] [--script PATH] [--resume ID] [PROMPT]

  --mode      how it is driven: pty (default), stream-json (Claude Code's -p protocol), acp
  --script    the script (else SCRIPTAGENT_SCRIPT)
  --resume    the CLI session id to go on with (else a new one, sa-<hex>)
  PROMPT      the first prompt (pty, stream-json)

Accepted and ignored, as Claude Code takes them: -p, --print, --verbose,
--dangerously-skip-permissions, --input-format X, --output-format X, --mcp-config X.
Environment: ATRIUM_URL, ATRIUM_TOKEN, ATRIUM_AGENT, ATRIUM_SESSION, ATRIUM_TASK,
ATRIUM_WORKSPACE, AGENT_WORKSPACE, SCRIPTAGENT_SCRIPT, SCRIPTAGENT_LOG.
`

type options struct {
	mode   string
	script string
	resume string
	prompt string // the last positional argument
}

// Claude Code's flags that scriptagent takes and ignores, with whether each
// takes a value: a value taken for a flag must not become the prompt.
var ignored = map[string]bool{
	"-p": false, "--print": false, "--verbose": false, "--dangerously-skip-permissions": false,
	"--input-format": true, "--output-format": true, "--mcp-config": true,
}

// parseArgs reads the command line. Flags may come after the prompt, as
// Atrium appends its MCP flags and the prompt to an agent's own arguments.
func parseArgs(args []string) (options, error) {
	o := options{mode: "pty"}
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			positional = append(positional, arg)
			continue
		}
		name, value, hasValue := strings.Cut(arg, "=")
		takesValue, known := ignored[name]
		switch name {
		case "--mode", "--script", "--resume":
			known, takesValue = true, true
		case "-h", "--help":
			return o, errHelp
		}
		if !known {
			return o, fmt.Errorf("unknown flag %s (scriptagent takes --mode, --script, --resume, and ignores Claude Code's -p, --print, --verbose, --dangerously-skip-permissions, --input-format, --output-format, --mcp-config)", name)
		}
		if takesValue && !hasValue {
			if i+1 >= len(args) {
				return o, fmt.Errorf("flag %s needs a value", name)
			}
			i++
			value = args[i]
		}
		switch name {
		case "--mode":
			o.mode = value
		case "--script":
			o.script = value
		case "--resume":
			o.resume = value
		}
	}
	switch o.mode {
	case "pty", "stream-json", "acp":
	default:
		return o, fmt.Errorf("unknown mode %q: give --mode pty, stream-json or acp", o.mode)
	}
	if len(positional) > 0 {
		o.prompt = positional[len(positional)-1]
	}
	return o, nil
}

var errHelp = fmt.Errorf("help")

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program; its result is the exit status.
func run(args []string, stdin io.Reader, stdout *os.File, stderr io.Writer) int {
	o, err := parseArgs(args)
	if err == errHelp {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "scriptagent: %v\n", err)
		return 2
	}
	if o.script == "" {
		o.script = os.Getenv("SCRIPTAGENT_SCRIPT")
	}
	if o.script == "" {
		fmt.Fprintln(stderr, "scriptagent: no script: give its path in SCRIPTAGENT_SCRIPT or --script")
		return 2
	}
	rules, err := loadScript(o.script)
	if err != nil {
		fmt.Fprintf(stderr, "scriptagent: %v\n", err)
		return 2
	}
	a := newAgent(rules, o.mode, stderr)
	defer a.atrium.close()
	cliSession := o.resume
	if cliSession == "" {
		cliSession = newID("sa-")
	}
	ctx := context.Background()
	switch o.mode {
	case "stream-json":
		err = runStreamJSON(ctx, a, cliSession, o.prompt, stdin, stdout)
	case "acp":
		err = runACP(ctx, a, stdin, stdout)
	default:
		err = runPTY(ctx, a, cliSession, o.prompt, stdin, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "scriptagent: %v\n", err)
		return 1
	}
	return 0
}

// newID is a fresh random id with prefix: a CLI session's (sa-…), a tool
// call's (toolu_…, as Claude names them).
func newID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail (Go 1.24)
	return prefix + hex.EncodeToString(b)
}

// newUUID is a random (version 4) UUID, for the uuid of stream-json lines.
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
