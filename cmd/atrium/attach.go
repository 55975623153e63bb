package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/coder/websocket"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

// detachKey ends an attach; the session goes on (Ctrl-], as telnet's).
const detachKey = 0x1d

func newAgentAttachCmd(g *globals) *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "attach SESSION",
		Short: "Watch a session's terminal, and type in it (Ctrl-] detaches; the session goes on)",
		Long: `Attach this terminal to a session's, as the browser's terminal does: what it shows first is
its recent output, then what follows. The first key you type takes control of it (everyone
watching is told); Ctrl-] detaches, and the session goes on. The server is --url (env
ATRIUM_URL, its MCP endpoint or its address), with the token in ATRIUM_TOKEN.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if url == "" {
				return fmt.Errorf("which server? give --url (or ATRIUM_URL) of the running atrium serve, and its token in ATRIUM_TOKEN")
			}
			return g.attach(cmd.Context(), url, args[0])
		},
	}
	cmd.Flags().StringVar(&url, "url", os.Getenv("ATRIUM_URL"), "the running server (env ATRIUM_URL; token in ATRIUM_TOKEN)")
	return cmd
}

// attach connects the command's terminal to session id's.
func (g *globals) attach(ctx context.Context, base, id string) error {
	base = strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/mcp")
	ws := "ws" + strings.TrimPrefix(base, "http") + "/sessions/" + id + "/terminal"
	h := http.Header{}
	if tok := os.Getenv("ATRIUM_TOKEN"); tok != "" {
		h.Set("Authorization", "Bearer "+tok)
	}
	c, res, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		if res != nil {
			b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
			return fmt.Errorf("attach to %s: %s: %s", id, res.Status, firstLine(string(b)))
		}
		return fmt.Errorf("attach to %s: %w", id, err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	in := g.stdin
	restore := func() {}
	fd := -1
	if f, ok := in.(*os.File); ok {
		if raw, err := makeRaw(int(f.Fd())); err == nil {
			restore, fd = raw, int(f.Fd())
		}
	}
	defer restore()
	fmt.Fprintf(g.stderr, "attached to %s (Ctrl-] detaches; your first key takes control)\r\n", id)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var me, writer string
	send := func(v any) error {
		b, _ := json.Marshal(v)
		return c.Write(ctx, websocket.MessageText, b)
	}
	resize := func() {
		if fd < 0 || writer != me {
			return
		}
		if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil {
			_ = send(map[string]any{"type": "resize", "rows": ws.Row, "cols": ws.Col})
		}
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	keys := make(chan []byte)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				select {
				case keys <- append([]byte(nil), buf[:n]...):
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				close(keys)
				return
			}
		}
	}()
	frames := make(chan error, 1)
	controlled := make(chan string, 4)
	go func() {
		for {
			typ, b, err := c.Read(ctx)
			if err != nil {
				frames <- err
				return
			}
			if typ == websocket.MessageBinary {
				g.stdout.Write(b)
				continue
			}
			var m struct {
				Type, You, State, Error string
				Writer                  json.RawMessage
				WriterID                string `json:"writer_id"`
			}
			_ = json.Unmarshal(b, &m)
			switch m.Type {
			case "hello":
				var w struct{ ID string }
				_ = json.Unmarshal(m.Writer, &w)
				controlled <- "you:" + m.You
				controlled <- "writer:" + w.ID
			case "control":
				var who string
				_ = json.Unmarshal(m.Writer, &who)
				controlled <- "writer:" + m.WriterID
				if who != "" {
					fmt.Fprintf(g.stderr, "\r\n[atrium: @%s has control]\r\n", who)
				}
			case "ended":
				fmt.Fprintf(g.stderr, "\r\n[atrium: the session ended: %s]\r\n", m.State)
			case "error":
				fmt.Fprintf(g.stderr, "\r\n[atrium: %s]\r\n", m.Error)
			}
		}
	}()
	for {
		var typed <-chan []byte // keys wait until the server said who we are
		if me != "" {
			typed = keys
		}
		select {
		case err := <-frames:
			if websocket.CloseStatus(err) == websocket.StatusNormalClosure || ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("the terminal's connection ended: %w", err)
		case s := <-controlled:
			if v, ok := strings.CutPrefix(s, "you:"); ok {
				me = v
			} else {
				writer = strings.TrimPrefix(s, "writer:")
				resize()
			}
		case <-winch:
			resize()
		case k, ok := <-typed:
			if !ok {
				c.Close(websocket.StatusNormalClosure, "detached")
				return nil // the input ended: detach
			}
			detach := false
			if i := strings.IndexByte(string(k), detachKey); i >= 0 {
				k, detach = k[:i], true
			}
			if detach && len(k) == 0 {
				c.Close(websocket.StatusNormalClosure, "detached")
				fmt.Fprint(g.stderr, "\r\n[atrium: detached; the session goes on]\r\n")
				return nil
			}
			if writer != me {
				if err := send(map[string]string{"type": "take"}); err != nil {
					return err
				}
				writer = me
			}
			if err := send(map[string]string{"type": "input", "data": string(k)}); err != nil {
				return err
			}
			if detach {
				c.Close(websocket.StatusNormalClosure, "detached")
				fmt.Fprint(g.stderr, "\r\n[atrium: detached; the session goes on]\r\n")
				return nil
			}
		}
	}
}

// makeRaw puts the terminal fd in raw mode and returns what restores it.
func makeRaw(fd int) (func(), error) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	raw := *old
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
