// Package api is Atrium's REST surface for browsers and scripts: JSON over the
// same services as the MCP tools, with the same rules, the same shapes and the
// same error codes (mapped to HTTP statuses by authn). Handlers only decode,
// call a service and encode.
package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/internal/jsonerr"
	"github.com/atrium-hq/atrium/services"
)

// Handler serves /api/… (and /w/{workspace}/api/…).
type Handler struct {
	Auth     *authn.Authenticator
	Services *services.Services
}

// maxJSONBody bounds a JSON request: a page of at most 2 MiB, escaped.
const maxJSONBody = 8 << 20

// Register mounts the routes on mux.
func (h *Handler) Register(mux *http.ServeMux) {
	for _, prefix := range []string{"", "/w/{workspace}"} {
		h.routes(func(pattern string, fn http.HandlerFunc) {
			method, path, _ := strings.Cut(pattern, " ")
			mux.Handle(method+" "+prefix+path, h.Auth.Browser(fn))
		})
	}
}

// Routes lists the patterns Register mounts ("GET /api/pages", …), each also
// under /w/{workspace}: suites that must cover every route (the isolation
// sweep, the error-wording sweep) are built from it, not from a hand-kept list.
func Routes() []string {
	var out []string
	(&Handler{}).routes(func(pattern string, _ http.HandlerFunc) { out = append(out, pattern) })
	return out
}

func (h *Handler) routes(route func(pattern string, fn http.HandlerFunc)) {
	route("GET /api/pages", h.listPages)
	route("GET /api/pages/{path...}", h.getPage)
	route("PUT /api/pages/{path...}", h.putPage)
	route("PATCH /api/pages/{path...}", h.patchPage)
	route("DELETE /api/pages/{path...}", h.deletePage)
	route("POST /api/pages/{path...}", h.postPage)
	route("GET /api/search", h.search)
	route("GET /api/tree", h.tree)
	route("GET /api/attachments/{path...}", h.getAttachment)
	h.registerReview(route)
	h.registerTrash(route)
	h.registerConsole(route)
	h.registerTasks(route)
}

// splitPage parses {path...} into the page path and what follows it:
// "Projects/Alpha.md/links" is page Projects/Alpha.md, sub-resource links.
func splitPage(r *http.Request) (page, sub string) {
	p := r.PathValue("path")
	if i := strings.Index(strings.ToLower(p), ".md/"); i >= 0 {
		return p[:i+3], p[i+4:]
	}
	return p, ""
}

func (h *Handler) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		h.Services.Log.Debug("write response", "err", err)
	}
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	authn.WriteError(w, r, h.Services.Log, err)
}

// decode reads a JSON body into v, refusing unknown fields so that a typo is
// an error rather than a silently ignored option.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		if errors.Is(err, io.EOF) {
			return atrium.Errorf(atrium.EInvalid, "the request body is empty; send a JSON object")
		}
		return atrium.Errorf(atrium.EInvalid, "request body: %s", jsonerr.Describe(err))
	}
	return nil
}

func intParam(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, atrium.Errorf(atrium.EInvalid, "%s must be a non-negative integer, not %q", name, v)
	}
	return n, nil
}

func boolParam(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, atrium.Errorf(atrium.EInvalid, "%s must be true or false, not %q", name, v)
	}
	return b, nil
}

// baseRevision is the revision a write is based on: the body's, else the
// If-Match header's ("3" or W/"3"), else 0.
func baseRevision(r *http.Request, body int64) (int64, error) {
	if body != 0 {
		return body, nil
	}
	v := strings.TrimSpace(r.Header.Get("If-Match"))
	if v == "" {
		return 0, nil
	}
	v = strings.Trim(strings.TrimPrefix(v, "W/"), `"`)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, atrium.Errorf(atrium.EInvalid, "If-Match must be a revision number, not %q", r.Header.Get("If-Match"))
	}
	return n, nil
}

func etag(rev int64) string { return `"` + strconv.FormatInt(rev, 10) + `"` }

// member reports whether the caller is a member of the workspace (not anonymous).
func member(r *http.Request) bool {
	a := atrium.ActorFromContext(r.Context())
	return a != nil && a.Role.Allows(atrium.RoleReader)
}
