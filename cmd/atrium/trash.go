package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
)

// newTrashCmd lists, restores and purges deleted pages, as the local caller
// (ATRIUM_AGENT in ATRIUM_WORKSPACE), printing the tools' JSON.
func newTrashCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "trash", Short: "List, restore and purge deleted pages"}
	var path, cursor string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the pages in the trash, most recently deleted first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.local(cmd, func(ctx context.Context, a *app) (any, error) {
				r, err := a.Pages.Trash(ctx, pages.TrashRequest{Path: path, Cursor: cursor})
				return r.Output(), err
			})
		},
	}
	list.Flags().StringVar(&path, "path", "", "only pages deleted from this path")
	list.Flags().StringVar(&cursor, "cursor", "", "next_cursor of the previous listing")

	var to string
	restore := &cobra.Command{
		Use:     "restore PAGE_ID|PATH",
		Short:   "Bring a page back from the trash, with its history, attachments and threads",
		Example: "  atrium trash restore pg_0123456789abcdef\n  atrium trash restore Projects/Alpha.md --to Projects/Alpha-restored.md",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := pages.RestoreRequest{PageID: args[0], To: to}
			if strings.HasSuffix(strings.ToLower(args[0]), ".md") {
				req = pages.RestoreRequest{Path: args[0], To: to}
			}
			return g.local(cmd, func(ctx context.Context, a *app) (any, error) {
				r, err := a.Pages.RestorePage(ctx, req)
				return r.Output(), err
			})
		},
	}
	restore.Flags().StringVar(&to, "to", "", "restore to this path instead (when another page has taken its own)")

	purge := &cobra.Command{
		Use:   "purge PAGE_ID",
		Short: "Delete a page in the trash for good",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.local(cmd, func(ctx context.Context, a *app) (any, error) {
				// Whoever can run this command holds the database itself:
				// they purge as the workspace's admin would.
				admin := *atrium.ActorFromContext(ctx)
				admin.Role = atrium.RoleAdmin
				p, err := a.Pages.PurgePage(atrium.NewContextWithActor(ctx, &admin), args[0])
				return pages.PurgePageOutput{Purged: true, PageID: p.UID, Path: p.Path}, err
			})
		},
	}
	cmd.AddCommand(list, restore, purge)
	return cmd
}

// local runs fn on the local store as the local caller and prints what it
// returns as JSON.
func (g *globals) local(cmd *cobra.Command, fn func(ctx context.Context, a *app) (any, error)) error {
	return g.withLocal(cmd, false, func(ctx context.Context, a *app) error {
		out, err := fn(ctx, a)
		if err != nil {
			return err
		}
		return g.printJSON(out)
	})
}

// withLocal runs fn on the local store as the local caller — as the
// workspace's admin when admin is set: whoever can run the command holds the
// database itself.
func (g *globals) withLocal(cmd *cobra.Command, admin bool, fn func(ctx context.Context, a *app) error) error {
	a, actor, err := g.openLocal(cmd.Context())
	if err != nil {
		return err
	}
	defer a.Close()
	if admin {
		op := *actor
		op.Role = atrium.RoleAdmin
		actor = &op
	}
	return fn(atrium.NewContextWithActor(cmd.Context(), actor), a)
}

func (g *globals) printJSON(v any) error {
	enc := json.NewEncoder(g.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("print: %w", err)
	}
	return nil
}
