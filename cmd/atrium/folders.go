package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/internal/vaultgen"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/records"
	"github.com/atrium-hq/atrium/vault"
)

// This file holds the commands that move pages between the workspace and a
// folder of Markdown files: import, export, and the vault generator used to
// benchmark them. The rules (what is a page, an attachment, what is skipped)
// are the vault package's; these parse flags and print.

// maxListed bounds each list of files in a summary; a vault with thousands of
// stray files should not bury the counts.
const maxListed = 20

func newImportCmd(g *globals) *cobra.Command {
	var exts []string
	cmd := &cobra.Command{
		Use:   "import [--ext .mdx] DIR",
		Short: "Import a folder of Markdown files (an Obsidian vault works) into the workspace",
		Long: `Import every .md file under DIR as a page at its path relative to DIR, and every
other file (images, PDFs, wherever the vault keeps them) as an attachment at its path.
Files of other Markdown flavours (.mdx, .markdown, …) are skipped unless named with
--ext; they are then stored as .md pages (Guide/intro.mdx becomes Guide/intro.md).

Hidden files and folders (.obsidian, .git, …) are left out silently. Symbolic links
are never followed: they are listed as ignored. Skipped files are listed with why.
A file that cannot be imported (bad frontmatter, invalid name, too large) is listed
as failed and the rest still go in; the exit status is then 1.

New pages are created, changed ones get a new revision, identical ones are left
alone: importing the same folder again changes nothing. Pages are written as you
(your user name, a person) or the agent ATRIUM_AGENT, in ATRIUM_WORKSPACE. New pages
are private unless their frontmatter says access: public.

When DIR holds an export's .atrium folder (tasks.json, threads.json, desks.json),
its tasks, comments, review threads and desks go in after the pages, as their
authors wrote them and with their times; authors the workspace lacks are created
with their kind (person or agent) and made writers. Those files are checked whole
first: a file that is not valid JSON of format atrium-export/1 stops the import
before anything is written. Task numbers are kept: if the workspace already gives
a number to another task, the import refuses, naming the numbers (import into a new
workspace instead). Importing the same export again adds nothing. The import acts
as the workspace's admin: whoever runs it holds the store.`,
		Example: `  atrium import ~/Obsidian/Work
  atrium import --ext .mdx ./docs-site
  ATRIUM_WORKSPACE=research atrium import ./notes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runImport(cmd.Context(), args[0], exts)
		},
	}
	cmd.Flags().StringSliceVar(&exts, "ext", nil, "also import files with this extension as pages (.mdx, .markdown; repeat or separate with commas)")
	return cmd
}

func (g *globals) runImport(ctx context.Context, dir string, exts []string) error {
	// An export's tasks, threads and desks are read and checked whole
	// before anything is written: a bad file stops the import here.
	set, err := records.Read(dir)
	if err != nil {
		return err
	}
	a, actor, err := g.openLocal(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	// Whoever can run this command holds the database itself: it imports
	// as the workspace's admin would, so that desks' plans and drafts go in
	// whoever's they are, and tasks and threads as their authors wrote
	// them, with their times, which no surface lets anyone else do.
	ctx = operator(ctx, actor)
	if err := records.Check(ctx, a.Services, set); err != nil {
		return err
	}
	opts := vault.ImportOptions{Options: vault.Options{Extensions: exts}}
	// The batches are sized by the workspace the import leaves: a large
	// one's commits write less in bigger ones (pages.ImportOptionsFor).
	if opts.Total, err = vault.CountPages(ctx, dir, opts.Options); err != nil {
		return err
	}
	have, err := a.Pages.PageCount(ctx)
	if err != nil {
		return err
	}
	var heap int64
	opts.Batches, heap = pages.ImportOptionsFor(have + opts.Total)
	// An import's live heap is its batch, a bounded 100–150 MB, which the
	// collector (GOGC 200, tuned for serving) would let grow to three times
	// that before collecting: a soft limit holds the peak under 300 MB for
	// 5–10% more CPU (vaultgen 100k: 432 → 268 MiB). GOMEMLIMIT overrides.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(heap)
	}
	prog := vault.NewProgressLine(g.stderr)
	if prog != nil {
		opts.Progress = prog
	}
	rep, err := vault.Import(ctx, a.Pages, dir, opts)
	prog.Clear()
	if rep == nil {
		return err
	}
	printImport(g.stderr, rep, err == nil)
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("import interrupted: %w", ctx.Err())
	case err != nil:
		return fmt.Errorf("import stopped: %w", err)
	}
	if set != nil {
		rr, err := records.Import(ctx, a.Services, set)
		printRecordsImport(g.stderr, rr)
		if err != nil {
			return fmt.Errorf("import of %s stopped: %w", filepath.Join(dir, records.Dir), err)
		}
	}
	if len(rep.Failed) > 0 {
		return exitError{code: 1}
	}
	return nil
}

// operator is ctx with actor as the admin of its workspace: the local
// commands that read or write everyone's records (export, import) act for
// whoever holds the store, as asOperator does.
func operator(ctx context.Context, actor *atrium.Actor) context.Context {
	admin := *actor
	admin.Role = atrium.RoleAdmin
	return atrium.NewContextWithActor(ctx, &admin)
}

// printRecordsImport writes what the import of .atrium/ did.
func printRecordsImport(w io.Writer, r *records.ImportReport) {
	if r == nil {
		return
	}
	if p := r.Principals; len(p.Created)+len(p.Joined)+len(p.OtherKind) > 0 {
		created := make([]string, len(p.Created))
		for i, x := range p.Created {
			created[i] = fmt.Sprintf("@%s (%s)", x.Handle, x.Kind)
		}
		fmt.Fprintf(w, "  principals:   %s created, %s made writers of the workspace\n", plural(len(p.Created), "principal"), vault.Group(len(p.Joined)))
		if len(created) > 0 {
			listNotes(w, []vault.Note{{Path: strings.Join(created, ", ")}})
		}
		for _, h := range p.OtherKind {
			fmt.Fprintf(w, "    @%s exists with another kind, which it keeps\n", h)
		}
	}
	if t := r.Tasks; t != nil {
		fmt.Fprintf(w, "  tasks:        %s created, %s updated, %s unchanged; %s added; %s set\n", vault.Group(t.Created), vault.Group(t.Updated), vault.Group(t.Unchanged),
			plural(t.Comments, "comment"), plural(t.Rules, "hand-off rule"))
		fmt.Fprintf(w, "  desks:        %s added or archived\n", plural(t.Progress, "progress item"))
	}
	if t := r.Threads; t != nil {
		fmt.Fprintf(w, "  threads:      %s created, %s updated, %s unchanged; %s added or changed\n", vault.Group(t.Created), vault.Group(t.Updated), vault.Group(t.Unchanged), plural(t.Reviews, "review"))
		if t.InTrash > 0 {
			fmt.Fprintf(w, "    %s left alone: their page is in the trash here\n", vault.Group(t.InTrash))
		}
		if t.NewIDs > 0 {
			fmt.Fprintf(w, "    %s given new ids: another workspace of this store holds theirs\n", vault.Group(t.NewIDs))
		}
	}
}

// printImport writes an import's summary; complete is false when it stopped early.
func printImport(w io.Writer, r *vault.ImportReport, complete bool) {
	p := r.Pages
	n := p.Created + p.Updated + p.Unchanged
	rate := ""
	if secs := r.PagesTime.Seconds(); n > 0 && secs > 0 {
		rate = fmt.Sprintf(" (%s pages/s)", vault.Group(int(float64(n)/secs)))
	}
	if complete {
		fmt.Fprintf(w, "Imported %s in %s\n", r.Dir, r.Elapsed.Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "Import of %s stopped after %s; what it did:\n", r.Dir, r.Elapsed.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "  pages:        %s created, %s updated, %s unchanged%s\n", vault.Group(p.Created), vault.Group(p.Updated), vault.Group(p.Unchanged), rate)
	if len(r.Renamed) > 0 {
		fmt.Fprintf(w, "  as .md:       %s\n", plural(len(r.Renamed), "file"))
		listNotes(w, r.Renamed)
	}
	fmt.Fprintf(w, "  attachments:  %s added, %s unchanged\n", vault.Group(r.AttAdded), vault.Group(r.AttUnchanged))
	if len(p.Private) > 0 {
		// Pages are private unless their frontmatter says access: public, and
		// a default list_pages shows public pages only: say so here, where a
		// user first meets it, not after an empty listing.
		fmt.Fprintf(w, "  private:      %s (no 'access: public' in their frontmatter): members see them; list_pages shows them with include_private=true\n", plural(len(p.Private), "page"))
		notes := make([]vault.Note, len(p.Private))
		for i, path := range p.Private {
			notes[i] = vault.Note{Path: path}
		}
		listNotes(w, notes)
	}
	fmt.Fprintf(w, "  ignored:      %s (never followed)\n", plural(len(r.Symlinks), "symlink"))
	listNotes(w, r.Symlinks)
	fmt.Fprintf(w, "  skipped:      %s\n", plural(len(r.Skipped), "file"))
	listNotes(w, r.Skipped)
	fmt.Fprintf(w, "  failed:       %s\n", plural(len(r.Failed), "file"))
	listNotes(w, r.Failed)
}

func listNotes(w io.Writer, notes []vault.Note) {
	for i, n := range notes {
		switch {
		case i == maxListed:
			fmt.Fprintf(w, "    and %s more\n", vault.Group(len(notes)-maxListed))
			return
		case n.Why == "":
			fmt.Fprintf(w, "    %s\n", n.Path)
		default:
			fmt.Fprintf(w, "    %s: %s\n", n.Path, n.Why)
		}
	}
}

// plural is "1 file", "2 files"; "1 reply", "2 replies".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok {
		return vault.Group(n) + " " + stem + "ies"
	}
	return vault.Group(n) + " " + noun + "s"
}

func newExportCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "export DIR",
		Short: "Write every page and attachment of the workspace to a folder, its tasks, threads and desks beside them",
		Long: `Write every page of the workspace to DIR/<its path>, with its exact content, and every
attachment to DIR/<its path> (wherever it is kept: Folder/assets/name, Attachments/x.png),
creating folders as needed.

Each file is written whole or not at all (a temporary file, then a rename). Files that
already hold the same bytes are left alone, so exporting again is cheap. Files in DIR
that are not pages are never removed. Nothing is written outside DIR, even through a
symbolic link inside it.

Beside the pages, DIR/.atrium holds the workspace's other records as JSON (format
atrium-export/1, stable and ordered, so that two exports diff readably): tasks.json
(tasks and todos with their comments and waits, the hand-off rules), threads.json
(reviews and review threads with their replies, drafts too) and desks.json (each
desk's todos, plan, draft and progress log). The folder is hidden: an import and the
folder mirror never take it for pages. The export of ATRIUM_WORKSPACE imports back
as it was, pages and records (atrium import DIR).`,
		Example: `  atrium export ./backup
  atrium export ~/Obsidian/Work && atrium --data-dir /tmp/copy import ~/Obsidian/Work`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runExport(cmd.Context(), args[0])
		},
	}
}

func (g *globals) runExport(ctx context.Context, dir string) error {
	a, actor, err := g.openLocal(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	// As the workspace's admin: the export holds everyone's work, drafts too.
	ctx = operator(ctx, actor)
	rep, err := vault.Export(ctx, a.Pages, dir)
	if rep == nil {
		return err
	}
	var rr *records.ExportReport
	if err == nil {
		rr, err = records.Export(ctx, a.Services, dir)
	}
	w := g.stderr
	fmt.Fprintf(w, "Exported to %s in %s\n", dir, rep.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "  pages:        %s written, %s unchanged\n", vault.Group(rep.PagesWritten), vault.Group(rep.PagesUnchanged))
	fmt.Fprintf(w, "  attachments:  %s written, %s unchanged\n", vault.Group(rep.AttWritten), vault.Group(rep.AttUnchanged))
	if rr != nil {
		fmt.Fprintf(w, "  tasks:        %s, %s, %s, %s\n", plural(rr.Tasks, "task"), plural(rr.Todos, "todo"), plural(rr.Comments, "comment"), plural(rr.Rules, "hand-off rule"))
		fmt.Fprintf(w, "  threads:      %s, %s, %s\n", plural(rr.Threads, "thread"), plural(rr.Replies, "reply"), plural(rr.Reviews, "review"))
		fmt.Fprintf(w, "  desks:        %s, %s\n", plural(rr.Desks, "desk"), plural(rr.Progress, "progress item"))
		fmt.Fprintf(w, "  records:      %s written, %s unchanged\n", vault.Group(len(rr.Written)), vault.Group(len(rr.Unchanged)))
		for _, f := range rr.Written {
			listNotes(w, []vault.Note{{Path: f}})
		}
	}
	fmt.Fprintf(w, "  failed:       %s\n", plural(len(rep.Failed), "file"))
	listNotes(w, rep.Failed)
	switch {
	case err != nil:
		return fmt.Errorf("export stopped: %w", err)
	case len(rep.Failed) > 0:
		return exitError{code: 1}
	}
	return nil
}

func newDevCmd(g *globals) *cobra.Command {
	// Hidden from the main help: these are for working on Atrium, not with it.
	cmd := &cobra.Command{Use: "dev", Short: "Tools for developing Atrium: test data for benchmarks and demos", Hidden: true}
	var (
		n    int
		seed uint64
	)
	gen := &cobra.Command{
		Use:   "gen-vault [-n N] [--seed S] DIR",
		Short: "Write a generated Markdown vault of N pages to DIR",
		Long: `Write the deterministic vault of internal/vaultgen to DIR: N pages in nested folders,
with frontmatter, headings, wikilinks, Markdown links and marker words of known
frequency. The same N and seed always write the same files.`,
		Example: `  atrium dev gen-vault -n 100000 /tmp/vault100k && time atrium --data-dir /tmp/imp import /tmp/vault100k`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 0 {
				return fmt.Errorf("-n must be 0 or more, not %d", n)
			}
			start := time.Now()
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			root, err := os.OpenRoot(args[0])
			if err != nil {
				return err
			}
			defer root.Close()
			made := map[string]bool{}
			err = vaultgen.Generate(seed, n, func(p vaultgen.Page) error {
				if err := cmd.Context().Err(); err != nil {
					return err
				}
				name := filepath.FromSlash(p.Path)
				// Pages share a few hundred folders; creating each once
				// saves a stat per page.
				if dir := filepath.Dir(name); !made[dir] {
					if err := root.MkdirAll(dir, 0o755); err != nil {
						return err
					}
					made[dir] = true
				}
				return root.WriteFile(name, []byte(p.Content), 0o644)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stderr, "Wrote %s pages (seed %d) to %s in %s\n", vault.Group(n), seed, args[0], time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	gen.Flags().IntVarP(&n, "pages", "n", 1000, "how many pages")
	gen.Flags().Uint64Var(&seed, "seed", 1, "the generator's seed")
	cmd.AddCommand(gen)
	return cmd
}
