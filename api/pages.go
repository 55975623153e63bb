package api

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
)

// listPages is the nav list: every page with its title, path and access
// level — public pages for anonymous callers, all of them with a token.
func (h *Handler) listPages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	depth, err := intParam(r, "depth")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if depth == 0 {
		depth = 64 // the whole nav unless asked
	}
	limit, err := intParam(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	private, err := boolParam(r, "include_private", member(r))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	content, err := boolParam(r, "include_content", false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.Services.Pages.ListPages(r.Context(), pages.ListRequest{Path: q.Get("path"), Depth: int(depth), IncludeContent: content, IncludePrivate: private, Cursor: q.Get("cursor"), Limit: int(limit)})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}

func (h *Handler) getPage(w http.ResponseWriter, r *http.Request) {
	page, sub := splitPage(r)
	switch sub {
	case "":
	case "links":
		res, err := h.Services.Pages.Links(r.Context(), page)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeJSON(w, http.StatusOK, res.Output())
		return
	case "revisions":
		limit, err := intParam(r, "limit")
		if err != nil {
			h.fail(w, r, err)
			return
		}
		res, err := h.Services.Pages.Revisions(r.Context(), page, r.URL.Query().Get("cursor"), int(limit))
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeJSON(w, http.StatusOK, res.Output())
		return
	default:
		h.fail(w, r, atrium.Errorf(atrium.ENotFound, "no such resource: %s of a page (links, revisions)", sub))
		return
	}
	rev, err := intParam(r, "revision")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.Services.Pages.ReadPage(r.Context(), pages.ReadRequest{Path: page, Section: r.URL.Query().Get("section"), Revision: rev})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Page.Revision))
	if wantsMarkdown(r) {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		io.WriteString(w, res.Content)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}

// wantsMarkdown: ?format=markdown, or an Accept that prefers text/markdown.
func wantsMarkdown(r *http.Request) bool {
	if f := r.URL.Query().Get("format"); f != "" {
		return f == "markdown" || f == "raw"
	}
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "text/markdown") && !strings.Contains(accept, "application/json")
}

// putBody is the JSON body of PUT /api/pages/{path}.
type putBody struct {
	Content      string `json:"content"`
	BaseRevision int64  `json:"base_revision,omitempty"`
	Overwrite    bool   `json:"overwrite,omitempty"`
}

// putPage writes a whole page: a JSON body, or the Markdown itself
// (Content-Type: text/markdown) with the base revision in If-Match.
func (h *Handler) putPage(w http.ResponseWriter, r *http.Request) {
	page, sub := splitPage(r)
	if sub != "" {
		h.fail(w, r, atrium.Errorf(atrium.ENotFound, "PUT goes to a page, not %s", sub))
		return
	}
	var body putBody
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "text/markdown" || mt == "text/plain" {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
		if err != nil {
			h.fail(w, r, err)
			return
		}
		body.Content = string(b)
	} else if err := decode(w, r, &body); err != nil {
		h.fail(w, r, err)
		return
	}
	rev, err := baseRevision(r, body.BaseRevision)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	body.BaseRevision = rev
	res, err := h.Services.Pages.WritePage(r.Context(), pages.WriteRequest{Path: page, Content: body.Content, BaseRevision: body.BaseRevision, Overwrite: body.Overwrite})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Page.Revision))
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	h.writeJSON(w, status, res.Output())
}

// patchBody is the JSON body of PATCH /api/pages/{path}: edit_page's input.
type patchBody struct {
	BaseRevision int64                 `json:"base_revision,omitempty"`
	Operations   []pages.EditOperation `json:"operations"`
}

func (h *Handler) patchPage(w http.ResponseWriter, r *http.Request) {
	page, sub := splitPage(r)
	if sub != "" {
		h.fail(w, r, atrium.Errorf(atrium.ENotFound, "PATCH goes to a page, not %s", sub))
		return
	}
	var body patchBody
	if err := decode(w, r, &body); err != nil {
		h.fail(w, r, err)
		return
	}
	rev, err := baseRevision(r, body.BaseRevision)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	body.BaseRevision = rev
	res, err := h.Services.Pages.EditPage(r.Context(), pages.EditRequest{Path: page, BaseRevision: body.BaseRevision, Ops: pages.Ops(body.Operations)})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(res.Page.Revision))
	h.writeJSON(w, http.StatusOK, res.Output())
}

func (h *Handler) deletePage(w http.ResponseWriter, r *http.Request) {
	page, sub := splitPage(r)
	if sub != "" {
		h.fail(w, r, atrium.Errorf(atrium.ENotFound, "DELETE goes to a page, not %s", sub))
		return
	}
	if _, err := h.Services.Pages.DeletePage(r.Context(), page); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// postPage serves the page actions: move, restore and attachments.
func (h *Handler) postPage(w http.ResponseWriter, r *http.Request) {
	page, sub := splitPage(r)
	switch sub {
	case "move":
		var body struct {
			DestinationPath string `json:"destination_path"`
		}
		if err := decode(w, r, &body); err != nil {
			h.fail(w, r, err)
			return
		}
		res, err := h.Services.Pages.MovePage(r.Context(), page, body.DestinationPath)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeJSON(w, http.StatusOK, res.Output())
	case "restore":
		var body struct {
			Revision     int64 `json:"revision"`
			BaseRevision int64 `json:"base_revision,omitempty"`
		}
		if err := decode(w, r, &body); err != nil {
			h.fail(w, r, err)
			return
		}
		if body.Revision <= 0 {
			h.fail(w, r, atrium.Errorf(atrium.EInvalid, "revision is required"))
			return
		}
		res, err := h.Services.Pages.RestoreRevision(r.Context(), page, body.Revision, body.BaseRevision)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeJSON(w, http.StatusOK, res.Output())
	case "attachments":
		h.postAttachment(w, r, page)
	default:
		h.fail(w, r, atrium.Errorf(atrium.ENotFound, "no such action on a page: %q (move, restore, attachments)", sub))
	}
}

// postAttachment takes a multipart upload (field "file") or the raw bytes
// with ?name=.
func (h *Handler) postAttachment(w http.ResponseWriter, r *http.Request, page string) {
	limit := h.Services.Pages.MaxAttachmentBytes
	body := http.MaxBytesReader(w, r.Body, limit+1<<20)
	var name string
	var data []byte
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				h.fail(w, r, maybeTooLarge(err))
				return
			}
			if part.FormName() != "file" {
				continue
			}
			name = part.FileName()
			if data, err = io.ReadAll(io.LimitReader(part, limit+1)); err != nil {
				h.fail(w, r, maybeTooLarge(err))
				return
			}
			break
		}
		if name == "" && data == nil {
			h.fail(w, r, atrium.Errorf(atrium.EInvalid, `send the file in a multipart field named "file"`))
			return
		}
	} else {
		var err error
		if data, err = io.ReadAll(body); err != nil {
			h.fail(w, r, maybeTooLarge(err))
			return
		}
	}
	if n := r.URL.Query().Get("name"); n != "" {
		name = n
	}
	res, err := h.Services.Pages.AddAttachment(r.Context(), pages.AttachRequest{PagePath: page, FileName: name, Data: data})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	status := http.StatusCreated
	if res.Existing {
		status = http.StatusOK
	}
	h.writeJSON(w, status, res.Output())
}

func maybeTooLarge(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return atrium.Errorf(atrium.ETooLarge, "the upload is larger than %d bytes", mbe.Limit)
	}
	return atrium.Errorf(atrium.EInvalid, "could not read the upload: %v", err)
}

// getAttachment serves an attachment's bytes (see serveFile).
func (h *Handler) getAttachment(w http.ResponseWriter, r *http.Request) {
	att, data, err := h.Services.Pages.Attachment(r.Context(), r.PathValue("path"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	serveFile(w, path.Base(att.Path), att.MIMEType, att.SHA256, data)
}

// serveFile sends a stored file's bytes. Active content (HTML, SVG) is sent
// as a download in a sandbox, so an upload cannot run script in a member's
// browser.
func serveFile(w http.ResponseWriter, name, mimeType, sha256 string, data []byte) {
	w.Header().Set("Content-Type", mimeType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'")
	w.Header().Set("ETag", `"`+sha256+`"`)
	disposition := "inline"
	if !safeInline(mimeType) {
		disposition = "attachment"
	}
	w.Header().Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": name}))
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
}

func safeInline(mimeType string) bool {
	switch mimeType {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/plain; charset=utf-8", "text/plain":
		return true
	}
	return false
}
