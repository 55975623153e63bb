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
		MCPArgs: []string{"--mcp-config", "{config}"},
	},
	"codex": {
		Name: "codex", Command: "codex", InstructionsFile: "AGENTS.md", PromptMode: PromptArg,
		PromptArgs: []string{"{prompt}"}, Resume: []string{"resume", "{id}"},
		MCPArgs: []string{"-c", `mcp_servers.atrium.command="{atrium}"`, "-c", `mcp_servers.atrium.args=["mcp"]`},
	},
	"gemini": {
		Name: "gemini", Command: "gemini", InstructionsFile: "GEMINI.md", PromptMode: PromptArg,
		PromptArgs: []string{"-i", "{prompt}"}, Resume: []string{"--resume", "{id}"},
	},
	"opencode": {
		Name: "opencode", Command: "opencode", InstructionsFile: "AGENTS.md", PromptMode: PromptArg,
		PromptArgs: []string{"--prompt", "{prompt}"},
	},
	"shell": {Name: "shell", Command: defaultShell(), PromptMode: PromptNone},
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
