package agents

import (
	"os"
	"slices"
	"strings"
)

// How a CLI takes its first prompt.
const (
	PromptArg   = "arg"   // on its command line (PromptArgs, with {prompt})
	PromptStdin = "stdin" // typed into its terminal once it starts
	PromptNone  = "none"  // it takes none (a shell)
)

// A Preset is how to launch one kind of coding-agent CLI.
type Preset struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	// InstructionsFile is the file the CLI reads its standing instructions
	// from, in its working folder (CLAUDE.md, AGENTS.md).
	InstructionsFile string
	PromptMode       string
	// PromptArgs are added after Args to pass the first prompt ({prompt}).
	PromptArgs []string
	// Resume are the arguments that resume the CLI's own session ({id}),
	// empty when it cannot.
	Resume []string
	// Wake is how a message reaches a running session (Wake*); with
	// stream-json or acp the first prompt is the first message too.
	Wake string
	// MCPArgs are added after Args to point the CLI at Atrium's MCP server:
	// {config} is the MCP configuration file Atrium writes for the session
	// (outside the worktree, so that no secret and no file of Atrium's lands
	// in the repository), {atrium} the atrium binary.
	MCPArgs []string
}

// presets are the built-in presets, by name.
var presets = map[string]Preset{
	"claude": {
		Name: "claude", Command: "claude", InstructionsFile: "CLAUDE.md", PromptMode: PromptArg,
		PromptArgs: []string{"{prompt}"}, Resume: []string{"--resume", "{id}"},
		MCPArgs: []string{"--mcp-config", "{config}"}, Wake: WakePTY,
	},
	// Claude Code headless: no screen of its own, every turn a message on
	// stdin, rendered for viewers; the surest way to wake it.
	"claude-stream": {
		Name: "claude-stream", Command: "claude", InstructionsFile: "CLAUDE.md", PromptMode: PromptNone,
		Args:   []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"},
		Resume: []string{"--resume", "{id}"}, MCPArgs: []string{"--mcp-config", "{config}"}, Wake: WakeStreamJSON,
	},
	"codex": {
		Name: "codex", Command: "codex", InstructionsFile: "AGENTS.md", PromptMode: PromptArg,
		PromptArgs: []string{"{prompt}"}, Resume: []string{"resume", "{id}"},
		MCPArgs: []string{"-c", `mcp_servers.atrium.command="{atrium}"`, "-c", `mcp_servers.atrium.args=["mcp"]`}, Wake: WakePTY,
	},
	"gemini": {
		Name: "gemini", Command: "gemini", InstructionsFile: "GEMINI.md", PromptMode: PromptArg,
		PromptArgs: []string{"-i", "{prompt}"}, Resume: []string{"--resume", "{id}"}, Wake: WakePTY,
	},
	// Gemini CLI as an ACP agent: Atrium is its client.
	"gemini-acp": {
		Name: "gemini-acp", Command: "gemini", Args: []string{"--acp"}, InstructionsFile: "GEMINI.md", PromptMode: PromptNone, Wake: WakeACP,
	},
	"opencode": {
		Name: "opencode", Command: "opencode", InstructionsFile: "AGENTS.md", PromptMode: PromptArg,
		PromptArgs: []string{"--prompt", "{prompt}"}, Wake: WakePTY,
	},
	"shell": {Name: "shell", Command: defaultShell(), PromptMode: PromptNone, Wake: WakeNone},
}

func defaultShell() string {
	if sh := os.Getenv("SHELL"); sh != "" {
		return sh
	}
	return "/bin/sh"
}

// PresetNames lists the built-in presets.
func PresetNames() []string {
	var out []string
	for n := range presets {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// expand replaces {key} in each of args with vars[key].
func expand(args []string, vars map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for k, v := range vars {
			a = strings.ReplaceAll(a, "{"+k+"}", v)
		}
		out[i] = a
	}
	return out
}
