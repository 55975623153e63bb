package github

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v93/github"

	"github.com/atrium-hq/atrium"
)

// An App is a GitHub App's credentials on the linked repository.
type App struct {
	ID  int64
	Key *rsa.PrivateKey
	// InstallationID is the App's installation on the repository; 0: found
	// with the App's JWT (GET /repos/{owner}/{repo}/installation).
	InstallationID int64
}

// String keeps the key out of whatever prints an App.
func (a App) String() string { return fmt.Sprintf("app %d (installation %d)", a.ID, a.InstallationID) }

// GoString keeps the key out of %#v too.
func (a App) GoString() string { return a.String() }

// The environment's names. An agent's are ATRIUM_AGENT_<HANDLE>_ and the
// link's suffixes, HANDLE as EnvHandle spells it.
const (
	EnvAppID          = "ATRIUM_GITHUB_APP_ID"
	EnvAppKeyPath     = "ATRIUM_GITHUB_APP_PRIVATE_KEY_PATH"
	EnvAppInstallID   = "ATRIUM_GITHUB_APP_INSTALLATION_ID"
	EnvAppsFile       = "ATRIUM_GITHUB_APPS"
	envAgentPrefix    = "ATRIUM_AGENT_"
	envAgentAppSuffix = "_GITHUB_APP_"
)

// EnvHandle is a handle as environment variable names spell it (002's):
// upper case, "-" and "." as "_". Apps are keyed by it.
func EnvHandle(handle string) string {
	return strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToUpper(handle))
}

// AppsFromEnv reads App credentials from environ (as os.Environ gives it):
// the link's from ATRIUM_GITHUB_APP_ID, ATRIUM_GITHUB_APP_PRIVATE_KEY_PATH
// and ATRIUM_GITHUB_APP_INSTALLATION_ID (optional); each agent's from the
// same names after ATRIUM_AGENT_<HANDLE>, and from the JSON file that
// ATRIUM_GITHUB_APPS names, {"handle": {"app_id", "private_key_path",
// "installation_id"}}, a relative path being the file's folder's. The
// environment wins over the file for a handle in both. Agents are keyed by
// EnvHandle. An error names the variable and the path, never a key's
// content.
func AppsFromEnv(environ []string) (link *App, agents map[string]App, err error) {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && v != "" {
			env[k] = v
		}
	}
	agents = map[string]App{}
	if path := env[EnvAppsFile]; path != "" {
		if err := appsFile(path, agents); err != nil {
			return nil, nil, err
		}
	}
	handles := map[string]bool{}
	for k := range env {
		if rest, ok := strings.CutPrefix(k, envAgentPrefix); ok {
			for _, suffix := range []string{"ID", "PRIVATE_KEY_PATH", "INSTALLATION_ID"} {
				if h, ok := strings.CutSuffix(rest, envAgentAppSuffix+suffix); ok && h != "" {
					handles[h] = true
				}
			}
		}
	}
	for h := range handles {
		a, err := appFromEnv(env, envAgentPrefix+h+envAgentAppSuffix)
		if err != nil {
			return nil, nil, err
		}
		agents[h] = *a
	}
	link, err = appFromEnv(env, "ATRIUM"+envAgentAppSuffix)
	if err != nil {
		return nil, nil, err
	}
	return link, agents, nil
}

// appFromEnv is the App named by prefix+ID, +PRIVATE_KEY_PATH and
// +INSTALLATION_ID; nil when none of them is set.
func appFromEnv(env map[string]string, prefix string) (*App, error) {
	idVar, keyVar, instVar := prefix+"ID", prefix+"PRIVATE_KEY_PATH", prefix+"INSTALLATION_ID"
	id, path, inst := env[idVar], env[keyVar], env[instVar]
	if id == "" && path == "" && inst == "" {
		return nil, nil
	}
	if id == "" || path == "" {
		return nil, atrium.Errorf(atrium.EInvalid, "a GitHub App needs both %s and %s", idVar, keyVar)
	}
	a := App{}
	var err error
	if a.ID, err = strconv.ParseInt(id, 10, 64); err != nil || a.ID <= 0 {
		return nil, atrium.Errorf(atrium.EInvalid, "%s is a GitHub App's numeric ID, not %q", idVar, id)
	}
	if inst != "" {
		if a.InstallationID, err = strconv.ParseInt(inst, 10, 64); err != nil || a.InstallationID <= 0 {
			return nil, atrium.Errorf(atrium.EInvalid, "%s is an installation's numeric ID, not %q", instVar, inst)
		}
	}
	if a.Key, err = readKey(keyVar, path); err != nil {
		return nil, err
	}
	return &a, nil
}

func appsFile(path string, into map[string]App) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return atrium.Errorf(atrium.EInvalid, "%s: cannot read %s: %v", EnvAppsFile, path, pathErr(err))
	}
	var m map[string]struct {
		AppID          int64  `json:"app_id"`
		PrivateKeyPath string `json:"private_key_path"`
		InstallationID int64  `json:"installation_id"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		// json's message quotes no more than a token of the file, which
		// holds paths and IDs, not keys.
		return atrium.Errorf(atrium.EInvalid, "%s: %s is not a JSON object of handles to {app_id, private_key_path, installation_id}: %v", EnvAppsFile, path, err)
	}
	for h, x := range m {
		what := fmt.Sprintf("%s (%s) %q", EnvAppsFile, path, h)
		if x.AppID <= 0 || x.PrivateKeyPath == "" || x.InstallationID < 0 {
			return atrium.Errorf(atrium.EInvalid, "%s: an App needs app_id and private_key_path", what)
		}
		kp := x.PrivateKeyPath
		if !filepath.IsAbs(kp) {
			kp = filepath.Join(filepath.Dir(path), kp)
		}
		key, err := readKey(what+" private_key_path", kp)
		if err != nil {
			return err
		}
		into[EnvHandle(h)] = App{ID: x.AppID, Key: key, InstallationID: x.InstallationID}
	}
	return nil
}

// readKey reads an App's PEM private key (PKCS#1, as GitHub hands it out,
// or PKCS#8). Its errors say what is wrong with the file, not what is in
// it.
func readKey(what, path string) (*rsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, atrium.Errorf(atrium.EInvalid, "%s: cannot read the private key %s: %v", what, path, pathErr(err))
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, atrium.Errorf(atrium.EInvalid, "%s: %s is not a PEM private key", what, path)
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if rk, ok := k.(*rsa.PrivateKey); err == nil && ok {
		return rk, nil
	}
	return nil, atrium.Errorf(atrium.EInvalid, "%s: %s is not an RSA private key (PKCS#1 or PKCS#8 PEM)", what, path)
}

// pathErr is err without the path it repeats.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// installation authenticates requests as an App's installation on the
// repository: ghinstallation mints its token with the App's JWT and mints
// another before it expires. The installation, unless given, is looked up
// on first use, so New makes no call.
type installation struct {
	app         *ghinstallation.AppsTransport
	id          int64
	base        string // API root without the trailing slash, as ghinstallation joins it
	owner, repo string

	mu sync.Mutex
	tr *ghinstallation.Transport
}

func newInstallation(a App, base http.RoundTripper, apiURL, owner, repo string) *installation {
	at := ghinstallation.NewAppsTransportFromPrivateKey(base, a.ID, a.Key)
	at.BaseURL = strings.TrimSuffix(apiURL, "/")
	return &installation{app: at, id: a.InstallationID, base: at.BaseURL, owner: owner, repo: repo}
}

func (i *installation) RoundTrip(req *http.Request) (*http.Response, error) {
	tr, err := i.transport(req.Context())
	if err != nil {
		return nil, err
	}
	return tr.RoundTrip(req)
}

func (i *installation) transport(ctx context.Context) (*ghinstallation.Transport, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.tr != nil {
		return i.tr, nil
	}
	id := i.id
	if id == 0 {
		root := i.base + "/"
		c, err := gh.NewClient(gh.WithHTTPClient(&http.Client{Transport: i.app}), gh.WithURLs(&root, &root), gh.WithUserAgent("atrium/"+atrium.Version))
		if err != nil {
			return nil, err
		}
		inst, _, err := c.Apps.GetRepositoryInstallation(ctx, i.owner, i.repo)
		var e *gh.ErrorResponse
		if errors.As(err, &e) && e.Response != nil {
			// Not wrapped: a 404 here is the App's, not the its
			// caller asked for.
			return nil, atrium.Errorf(atrium.EPermission, "GitHub App %d has no installation on %s/%s that its key opens: %d %s",
				i.app.AppID(), i.owner, i.repo, e.Response.StatusCode, e.Message)
		}
		if err != nil {
			return nil, fmt.Errorf("the installation of GitHub App %d on %s/%s: %w", i.app.AppID(), i.owner, i.repo, err)
		}
		id = inst.GetID()
	}
	i.tr = ghinstallation.NewFromAppsTransport(i.app, id)
	i.tr.BaseURL = i.base
	return i.tr, nil
}
