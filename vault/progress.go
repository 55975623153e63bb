package vault

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ProgressLine draws an import's progress on one terminal line, redrawn in
// place. A nil *ProgressLine draws nothing.
type ProgressLine struct {
	w     io.Writer
	start time.Time
	width int // of the line drawn last, to blank it out
}

// NewProgressLine is a progress line on w when w is a terminal, else nil: a
// pipe or a file would collect every redraw.
func NewProgressLine(w io.Writer) *ProgressLine {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &ProgressLine{w: w, start: time.Now()}
}

// Pages draws how many pages are in.
func (p *ProgressLine) Pages(done, total int) {
	if p == nil {
		return
	}
	pct := 100
	if total > 0 {
		pct = min(100, done*100/total)
	}
	rate := 0
	if secs := time.Since(p.start).Seconds(); secs > 0 {
		rate = int(float64(done) / secs)
	}
	p.draw(fmt.Sprintf("  importing… %s / %s pages  %d%%  %s pages/s", Group(done), Group(total), pct, Group(rate)))
}

// Attachments draws how many attachments are in.
func (p *ProgressLine) Attachments(done, total int) {
	if p == nil {
		return
	}
	p.draw(fmt.Sprintf("  attaching… %s / %s files", Group(done), Group(total)))
}

func (p *ProgressLine) draw(line string) {
	w := utf8.RuneCountInString(line)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", max(0, p.width-w)))
	p.width = w
}

// Clear blanks the line so that a summary starts on a clean one.
func (p *ProgressLine) Clear() {
	if p == nil || p.width == 0 {
		return
	}
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	p.width = 0
}

// Group writes n with its thousands separated by spaces: 100 000.
func Group(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}
