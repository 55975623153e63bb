package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The official conformance suite's authorization-server scenarios against
// the real binary: its metadata endpoint, and the authorization code grant
// end to end — the suite prints the authorization URL and waits on its own
// callback listener, a person consents in the browser, the browser follows
// the redirect to the suite, and the suite exchanges the code and checks the
// token response.
func TestOAuthConformanceAuthorizationServer(t *testing.T) {
	bin := nodeBin(t)
	cli, _ := filepath.Abs(filepath.Join("..", "interop", "node_modules", "conformance-next", "dist", "index.js"))
	srv := startServe(t, "")
	person := signedIn(t, srv, srv.AdminToken)
	port := freePort(t)
	callback := "http://127.0.0.1:" + strconv.Itoa(port) + "/callback"
	client := register(t, srv, callback)
	// Both scenarios in one run: the grant reads the metadata the first fetched.
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), cli, "authorization", "--url", srv.URL,
		"--client-id", client, "--resource", srv.MCP(), "--port", strconv.Itoa(port), "-o", dir)
	cmd.Env = append(cleanEnv(), "NO_COLOR=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		log.WriteString(line + "\n")
		if strings.HasPrefix(line, srv.URL+"/oauth/authorize?") {
			to, err := person.consent(line, approve("default", "writer", ""))
			if err != nil {
				t.Fatalf("consent: %v", err)
			}
			// The browser follows the redirect to the suite's listener,
			// which may still be coming up when the URL is printed.
			for try := 0; ; try++ {
				res, err := http.Get(to.String())
				if err == nil {
					res.Body.Close()
					break
				}
				if try == 50 {
					t.Fatalf("follow the redirect to the suite: %v", err)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Logf("conformance exited: %v", err)
	}
	checks := readChecks(t, dir)
	if len(checks) == 0 {
		t.Fatalf("no checks recorded\n%s", log.String())
	}
	for _, c := range checks {
		if c["status"] != "SUCCESS" && c["status"] != "INFO" {
			t.Errorf("%s: %v %v", c["id"], c["status"], c["errorMessage"])
		}
	}
	if len(checks) < 2 || t.Failed() {
		t.Errorf("%d checks\n%s", len(checks), log.String())
	}
}

// readChecks reads the checks a conformance run saved under dir.
func readChecks(t *testing.T, dir string) []map[string]any {
	t.Helper()
	var out []map[string]any
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !regexp.MustCompile(`checks\.json$`).MatchString(p) {
			return nil
		}
		b, _ := os.ReadFile(p)
		var cs []map[string]any
		if json.Unmarshal(b, &cs) == nil {
			out = append(out, cs...)
		}
		return nil
	})
	return out
}

// The conformance suite's client authorization scenarios against `atrium
// call --url` and against the gateway (scripts/conformance-client.sh): every
// scenario of the authorization code flow that the 2026-07-28 revision
// requires — metadata discovery in its variants, CIMD, scopes and step-up,
// the three token endpoint authentication methods, pre-registration, the
// resource parameter, offline access, the issuer checks, a migrating
// authorization server — passes, every check. The gateway signs in with
// `atrium gateway login` and calls with the kept tokens from another
// process, where no person is there to ask: step-up is the one scenario it
// cannot pass, by design (the server then fails with a message saying who
// must sign in again). The extensions — client credentials,
// enterprise-managed, DPoP, workload identity — are not flows a person's CLI
// or the gateway uses, and are not scored.
func TestOAuthConformanceClient(t *testing.T) {
	bin := nodeBin(t)
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("the conformance client script needs jq (apt-get install jq)")
	}
	cli, _ := filepath.Abs(filepath.Join("..", "interop", "node_modules", "conformance-next", "dist", "index.js"))
	script, _ := filepath.Abs(filepath.Join("..", "scripts", "conformance-client.sh"))
	summary := regexp.MustCompile(`(?m)^[✓✗] (auth/\S+): (\d+) passed, (\d+) failed`)
	extensions := map[string]bool{"auth/client-credentials-jwt": true, "auth/client-credentials-basic": true, "auth/enterprise-managed-authorization": true,
		"auth/dpop": true, "auth/dpop-nonce": true, "auth/wif-jwt-bearer": true}
	for _, via := range []string{"call", "gateway"} {
		t.Run(via, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), cli, "client", "--command", script, "--requirements", "2026-07-28", "-o", t.TempDir())
			cmd.Env = append(cleanEnv(), "NO_COLOR=1", "ATRIUM_BIN="+binary, "ATRIUM_CONFORMANCE_VIA="+via, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, _ := cmd.CombinedOutput()
			scored, passed := 0, 0
			for _, m := range summary.FindAllStringSubmatch(string(out), -1) {
				if extensions[m[1]] {
					continue
				}
				scored++
				p, _ := strconv.Atoi(m[2])
				passed += p
				if m[3] != "0" && !(via == "gateway" && m[1] == "auth/scope-step-up") {
					t.Errorf("%s: %s passed, %s failed", m[1], m[2], m[3])
				}
			}
			if scored < 25 {
				t.Fatalf("%d authorization scenarios scored (want the 25 of 2026-07-28)\n%s", scored, out)
			}
			t.Logf("client authorization via %s: %d scenarios, %d checks passed", via, scored, passed)
			if t.Failed() {
				t.Log(string(out))
			}
		})
	}
}

// mcporter's own OAuth flow (`mcporter auth URL`) against the real binary:
// it registers, prints the authorization URL, the person consents, the
// redirect reaches mcporter's listener, and its next call uses the tokens
// it kept.
func TestOAuthMcporterAuth(t *testing.T) {
	bin := nodeBin(t)
	srv := startServe(t, "")
	person := signedIn(t, srv, srv.AdminToken)
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "mcporter"), "auth", srv.MCP(), "--allow-http", "--no-browser")
	cmd.Env = append(cleanEnv(), "HOME="+home, "NO_COLOR=1", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sc := bufio.NewScanner(out)
	consented := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		log.WriteString(line + "\n")
		if consented || !strings.HasPrefix(line, srv.URL+"/oauth/authorize?") {
			continue
		}
		to, err := person.consent(line, approve("default", "writer", ""))
		if err != nil {
			t.Fatalf("consent: %v\n%s", err, log.String())
		}
		res, err := http.Get(to.String())
		if err != nil {
			t.Fatalf("the redirect to mcporter: %v", err)
		}
		res.Body.Close()
		consented = true
	}
	if err := cmd.Wait(); err != nil || !consented {
		t.Fatalf("mcporter auth: %v (consented %v)\n%s", err, consented, log.String())
	}
	got, code := runNode(t, bin, home, []string{"HOME=" + home}, "mcporter", "call", "--http-url", srv.MCP(), "--allow-http", "whoami", "--output", "json")
	me := lastJSON(t, got)
	if code != 0 || handleOf(me) != "admin" || me["role"] != "writer" {
		t.Errorf("mcporter call with its kept tokens: exit %d\n%s", code, got)
	}
}
