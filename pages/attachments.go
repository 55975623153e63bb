package pages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// AssetsFolder holds a folder's attachments, beside its pages.
const AssetsFolder = "assets"

// AttachRequest adds a file to a page.
type AttachRequest struct {
	PagePath string
	FileName string
	Data     []byte
}

// AttachResult is where an attachment went and how to link it.
type AttachResult struct {
	Attachment     atrium.Attachment
	RelativePath   string // from the page: "./assets/diagram.png"
	MarkdownSyntax string // "![diagram.png](./assets/diagram.png)"
	Existing       bool   // the same file was already attached there
}

// AddAttachment stores a file in the assets folder beside a page. A name taken
// by another file gets a numbered suffix; the same file again is not stored twice.
func (s *Service) AddAttachment(ctx context.Context, r AttachRequest) (AttachResult, error) {
	a, err := writer(ctx)
	if err != nil {
		return AttachResult{}, err
	}
	pagePath, err := NormalizePath(r.PagePath)
	if err != nil {
		return AttachResult{}, err
	}
	name, err := attachmentName(r.FileName)
	if err != nil {
		return AttachResult{}, err
	}
	if int64(len(r.Data)) > s.MaxAttachmentBytes {
		return AttachResult{}, atrium.Errorf(atrium.ETooLarge, "the file is %d bytes; attachments may be at most %d", len(r.Data), s.MaxAttachmentBytes)
	}
	sum := sha256.Sum256(r.Data)
	digest := hex.EncodeToString(sum[:])
	var res AttachResult
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := tx.PageByPath(ctx, a.Workspace.ID, pagePath)
		if err != nil {
			return err
		}
		dir := join(folderOf(p.Path), AssetsFolder)
		stem, ext := strings.TrimSuffix(name, path.Ext(name)), path.Ext(name)
		for n := 1; ; n++ {
			candidate := name
			if n > 1 {
				candidate = fmt.Sprintf("%s-%d%s", stem, n, ext)
			}
			existing, _, err := tx.AttachmentByPath(ctx, a.Workspace.ID, join(dir, candidate))
			if atrium.ErrorCode(err) == atrium.ENotFound {
				name = candidate
				break
			}
			if err != nil {
				return err
			}
			if existing.SHA256 == digest && existing.PageID == p.ID {
				res.Attachment, res.Existing = existing, true
				name = candidate
				break
			}
			if n > 1000 {
				return atrium.Errorf(atrium.EConflict, "too many attachments named %s in %s", r.FileName, dir)
			}
		}
		if !res.Existing {
			res.Attachment = atrium.Attachment{PageID: p.ID, Path: join(dir, name), Name: name, MIMEType: mimeType(name, r.Data), Size: int64(len(r.Data)), SHA256: digest, CreatedBy: a.Principal.Handle}
			if err := tx.InsertAttachment(ctx, a.Workspace.ID, &res.Attachment, r.Data, a.Principal.ID); err != nil {
				return err
			}
			if err := tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventAttachmentAdded, res.Attachment.Path,
				map[string]any{"path": res.Attachment.Path, "page": p.Path, "size": res.Attachment.Size, "origin": originOf(ctx)}); err != nil {
				return err
			}
		}
		res.RelativePath = "./" + AssetsFolder + "/" + name
		link := escapeLink(res.RelativePath)
		if strings.HasPrefix(res.Attachment.MIMEType, "image/") {
			res.MarkdownSyntax = fmt.Sprintf("![%s](%s)", name, link)
		} else {
			res.MarkdownSyntax = fmt.Sprintf("[%s](%s)", name, link)
		}
		return nil
	})
	return res, err
}

// attachmentName checks a file name for an attachment: a plain name, never a
// path, and never a page.
func attachmentName(n string) (string, error) {
	n = strings.TrimSpace(path.Base(strings.ReplaceAll(n, `\`, "/")))
	if n == "" || n == "." || n == "/" {
		return "", atrium.Errorf(atrium.EInvalid, "file_name is required (e.g. diagram.png)")
	}
	if err := checkSegment(n); err != "" {
		return "", atrium.Errorf(atrium.EInvalid, "invalid file name %q: %s", n, err)
	}
	if strings.EqualFold(path.Ext(n), ".md") {
		return "", atrium.Errorf(atrium.EInvalid, "invalid file name %q: .md files are pages; write them with write_page", n)
	}
	return n, nil
}

func mimeType(name string, data []byte) string {
	if t := mime.TypeByExtension(strings.ToLower(path.Ext(name))); t != "" {
		return t
	}
	return http.DetectContentType(data)
}

// escapeLink keeps a link destination intact in Markdown: spaces and
// parentheses would end it.
func escapeLink(p string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29").Replace(p)
}

// Attachment returns an attachment with its bytes; anonymous readers only get
// those of public pages.
func (s *Service) Attachment(ctx context.Context, p string) (atrium.Attachment, []byte, error) {
	a, member, err := reader(ctx)
	if err != nil {
		return atrium.Attachment{}, nil, err
	}
	clean, err := normalize(p, "attachment path")
	if err != nil {
		return atrium.Attachment{}, nil, err
	}
	var att atrium.Attachment
	var data []byte
	err = s.db.View(ctx, func(tx *store.Tx) error {
		att, data, err = tx.AttachmentByPath(ctx, a.Workspace.ID, clean)
		if err != nil {
			return err
		}
		page, err := tx.PageByID(ctx, att.PageID)
		if err != nil {
			return err
		}
		if !member && page.Access != atrium.AccessPublic {
			return atrium.Errorf(atrium.ENotFound, "Attachment not found at path: %s", clean)
		}
		return nil
	})
	return att, data, err
}
