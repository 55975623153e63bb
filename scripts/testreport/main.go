// Command testreport reads `go test -json` on stdin and prints what a person
// needs of it: each package's result line, the output of every test that
// failed, build errors, and at the end every test that skipped, with why.
// It exits 1 when anything failed. `make test` pipes the suite through it, so
// that a skip in CI is seen rather than passed over. Last come the slowest
// tests, so that the suite's time is watched where it goes.
//
// Given files (named pipes, as make test gives it), it reads them all at once,
// a line at a time from each: make test runs the suite in two lanes, and their
// streams are merged here by whole lines, live.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
)

// event is one line of test2json.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// timed is a top-level test and how long it ran.
type timed struct {
	name    string
	elapsed float64
}

func main() {
	failed := false
	outputs := map[string][]string{} // package + test: its output, kept until it ends
	var skips []string
	var slow []timed
	for l := range lines(os.Args[1:]) {
		if l.err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", l.err)
			failed = true
			continue
		}
		var e event
		if err := json.Unmarshal(l.text, &e); err != nil {
			fmt.Println(string(l.text)) // not an event: pass it on
			continue
		}
		// The same test may run in both lanes (the PostgreSQL pass): its
		// output is kept apart by lane.
		key := fmt.Sprint(l.lane, " ", e.Package, " ", e.Test)
		switch {
		case e.Action == "build-output" || e.Action == "build-fail":
			fmt.Print(e.Output)
			failed = failed || e.Action == "build-fail"
		case e.Test == "" && e.Action == "output":
			// The package's own lines: "ok …", "FAIL …", what TestMain prints.
			if !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "PASS\n") {
				fmt.Print(e.Output)
			}
		case e.Test == "" && e.Action == "fail":
			failed = true
		case e.Test == "":
			// A package's start, pass or skip (no test files): its line said it.
		case e.Action == "output":
			if !framing(e.Output) {
				outputs[key] = append(outputs[key], e.Output)
			}
		case e.Action == "fail":
			failed = true
			fmt.Printf("--- FAIL: %s (%s)\n%s", e.Test, e.Package, strings.Join(outputs[key], ""))
			delete(outputs, key)
		case e.Action == "skip":
			why := strings.TrimSpace(strings.Join(outputs[key], ""))
			skips = append(skips, fmt.Sprintf("%s %s\n    %s", e.Package, e.Test, strings.ReplaceAll(why, "\n", "\n    ")))
			delete(outputs, key)
		case e.Action == "pass":
			delete(outputs, key)
		}
		if (e.Action == "pass" || e.Action == "fail") && e.Test != "" && !strings.Contains(e.Test, "/") {
			slow = append(slow, timed{e.Package[strings.LastIndexByte(e.Package, '/')+1:] + " " + e.Test, e.Elapsed})
		}
	}
	// Tests that never ended: running when their binary died (a timeout, a
	// crash). Their output is the clue.
	var unfinished []string
	for key, out := range outputs {
		if len(out) > 0 {
			unfinished = append(unfinished, fmt.Sprintf("--- UNFINISHED: %s\n%s", key, strings.Join(out, "")))
		}
	}
	slices.Sort(unfinished)
	for _, u := range unfinished {
		fmt.Print(u)
	}
	slices.Sort(skips)
	fmt.Printf("\n== skipped: %d test(s)\n", len(skips))
	for _, s := range skips {
		fmt.Println(s)
	}
	slices.SortFunc(slow, func(a, b timed) int { return cmp.Compare(b.elapsed, a.elapsed) })
	fmt.Printf("\n== slowest tests\n")
	for _, t := range slow[:min(len(slow), 15)] {
		fmt.Printf("%7.1fs  %s\n", t.elapsed, t.name)
	}
	if failed {
		os.Exit(1)
	}
}

// line is one line of one input, or the error that ended it.
type line struct {
	lane int
	text []byte
	err  error
}

// lines yields the lines of the files named, or of stdin when none is, as
// they come from each.
func lines(names []string) <-chan line {
	out := make(chan line)
	var wg sync.WaitGroup
	read := func(lane int, open func() (*os.File, error)) {
		defer wg.Done()
		f, err := open()
		if err != nil {
			out <- line{lane: lane, err: err}
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			out <- line{lane: lane, text: slices.Clone(sc.Bytes())}
		}
		if err := sc.Err(); err != nil {
			out <- line{lane: lane, err: err}
		}
	}
	if len(names) == 0 {
		wg.Add(1)
		go read(0, func() (*os.File, error) { return os.Stdin, nil })
	}
	for i, name := range names {
		wg.Add(1)
		go read(i, func() (*os.File, error) { return os.Open(name) })
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
}

// framing tells the lines go test -v adds around a test's own output.
func framing(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- SKIP", "--- FAIL"} {
		if strings.HasPrefix(strings.TrimSpace(line), p) {
			return true
		}
	}
	return false
}
