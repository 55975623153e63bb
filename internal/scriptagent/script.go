package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// A rule is what the agent does on a prompt that it matches.
type rule struct {
	Match  string `json:"match"`  // a substring of the prompt; empty matches any
	Unless string `json:"unless"` // a substring that, in the prompt, skips the rule
	Calls  []call `json:"calls"`
	Reply  string `json:"reply"`
	Exit   bool   `json:"exit"` // end the process after the reply
}

// A call is one MCP tool call of a rule, or a pause (SleepMS, no tool):
// a test holds the agent between two calls, as a real agent thinks
// between them, to stop Atrium there.
type call struct {
	Tool    string         `json:"tool"`
	Args    map[string]any `json:"args"`
	SleepMS int            `json:"sleep_ms"`
}

// loadScript reads the rules of the script at path. Unknown fields are
// errors: a misspelt "reply" or "exit" would otherwise pass unnoticed and
// make a test wait for what never comes.
func loadScript(path string) ([]rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the script: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber() // numbers in args pass to Atrium as written
	var s struct {
		Rules []rule `json:"rules"`
	}
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("script %s: %w (it is {\"rules\":[{\"match\",\"unless\",\"calls\":[{\"tool\",\"args\"} or {\"sleep_ms\"}],\"reply\",\"exit\"}]})", path, err)
	}
	for i, r := range s.Rules {
		for j, c := range r.Calls {
			if (c.Tool == "") == (c.SleepMS <= 0) {
				return nil, fmt.Errorf("script %s: rule %d, call %d has no tool, or both a tool and sleep_ms", path, i+1, j+1)
			}
		}
	}
	return s.Rules, nil
}

// An agent is what every mode shares: the rules, who it is, and its
// connection to Atrium.
type agent struct {
	rules  []rule
	mode   string
	handle string // ATRIUM_AGENT
	task   string // ATRIUM_TASK, when it is a number
	atrium *atriumClient
	stderr io.Writer

	logPath string // SCRIPTAGENT_LOG

	mu       sync.Mutex        // the log, and lastTask: ACP sessions run at once
	lastTask map[string]string // by CLI session
}

func newAgent(rules []rule, mode string, stderr io.Writer) *agent {
	a := &agent{rules: rules, mode: mode, handle: os.Getenv("ATRIUM_AGENT"), stderr: stderr,
		logPath: os.Getenv("SCRIPTAGENT_LOG"), lastTask: map[string]string{}}
	if t := os.Getenv("ATRIUM_TASK"); taskNumber.MatchString(t) {
		a.task = t
	}
	a.atrium = &atriumClient{url: os.Getenv("ATRIUM_URL"), token: os.Getenv("ATRIUM_TOKEN"), workspace: os.Getenv("ATRIUM_WORKSPACE")}
	return a
}

var (
	taskNumber = regexp.MustCompile(`^[0-9]+$`)
	taskRef    = regexp.MustCompile(`Task #([0-9]+)`)
)

// A step is one tool call of a turn, as a mode shows it.
type step struct {
	id     string
	tool   string
	args   map[string]any
	text   string // the result's text, or what went wrong
	failed bool
}

// A turn is what the agent did on one prompt.
type turn struct {
	reply string
	exit  bool
	calls int
}

// respond runs the first rule that matches prompt. started and finished
// show each call as it begins and ends, so that a mode streams them the way
// a real CLI does, not all at the end. cliSession names the conversation in
// the log.
func (a *agent) respond(ctx context.Context, cliSession, prompt string, started, finished func(*step)) turn {
	a.record(cliSession, prompt)
	var r *rule
	for i := range a.rules {
		c := &a.rules[i]
		if strings.Contains(prompt, c.Match) && (c.Unless == "" || !strings.Contains(prompt, c.Unless)) {
			r = c
			break
		}
	}
	if r == nil {
		return turn{reply: "nothing to do"}
	}
	task := a.taskOf(cliSession, prompt)
	var t turn
	for _, c := range r.Calls {
		if ctx.Err() != nil { // cancelled (ACP): the rest of the turn is not wanted
			break
		}
		if c.Tool == "" {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(c.SleepMS) * time.Millisecond):
			}
			continue
		}
		args, _ := expand(c.Args, task, a.handle).(map[string]any)
		if args == nil {
			args = map[string]any{}
		}
		s := &step{id: newID("toolu_"), tool: c.Tool, args: args}
		started(s)
		s.text, s.failed = a.atrium.call(ctx, c.Tool, args)
		finished(s)
		t.calls++
	}
	t.reply, _ = expand(r.Reply, task, a.handle).(string)
	t.exit = r.Exit
	return t
}

// taskOf is the task a prompt is about: ATRIUM_TASK, else the first "Task
// #N" of the prompt, else the last one the conversation named, as a model
// would remember it (an answer that wakes the agent need not repeat it).
func (a *agent) taskOf(cliSession, prompt string) string {
	if a.task != "" {
		return a.task
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if m := taskRef.FindStringSubmatch(prompt); m != nil {
		a.lastTask[cliSession] = m[1]
	}
	return a.lastTask[cliSession]
}

// expand fills {task} and {agent} in every string of v. A string that is
// exactly "{task}" becomes the number itself, as Atrium's tools take
// issue_number. With no task known, {task} stays as written, and the tool's
// error shows it.
func expand(v any, task, handle string) any {
	switch v := v.(type) {
	case string:
		if task != "" {
			if v == "{task}" {
				return json.Number(task)
			}
			v = strings.ReplaceAll(v, "{task}", task)
		}
		return strings.ReplaceAll(v, "{agent}", handle)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = expand(x, task, handle)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = expand(x, task, handle)
		}
		return out
	}
	return v
}

// record appends prompt to SCRIPTAGENT_LOG, one JSON line per prompt, in one
// write: agents of a test share the file.
func (a *agent) record(cliSession, prompt string) {
	if a.logPath == "" {
		return
	}
	line, _ := json.Marshal(map[string]string{
		"agent": a.handle, "session": os.Getenv("ATRIUM_SESSION"), "cli_session": cliSession,
		"mode": a.mode, "prompt": prompt, "at": time.Now().UTC().Format(time.RFC3339Nano),
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.OpenFile(a.logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.Write(append(line, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "scriptagent: SCRIPTAGENT_LOG: %v\n", err)
	}
}
