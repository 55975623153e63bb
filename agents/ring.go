package agents

import "sync"

// A ring keeps the last size bytes of a session's output, so that a viewer
// who connects later — or reconnects — is shown the screen as it is.
type ring struct {
	mu    sync.Mutex
	buf   []byte
	start int // where the oldest byte is, once full
	full  bool
	total int64 // bytes written since the start
}

func newRing(size int) *ring { return &ring{buf: make([]byte, 0, size)} }

// Write appends p, dropping the oldest bytes past the ring's size.
func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	r.total += int64(n)
	size := cap(r.buf)
	if n >= size {
		r.buf = append(r.buf[:0], p[n-size:]...)
		r.start, r.full = 0, true
		return n, nil
	}
	for len(p) > 0 {
		if !r.full {
			room := size - len(r.buf)
			k := min(room, len(p))
			r.buf = append(r.buf, p[:k]...)
			p = p[k:]
			if len(r.buf) == size {
				r.full = true
			}
			continue
		}
		k := copy(r.buf[r.start:], p)
		p = p[k:]
		r.start = (r.start + k) % size
	}
	return n, nil
}

// Snapshot is the kept output, oldest first, and how many bytes were ever
// written (a viewer's position).
func (r *ring) Snapshot() ([]byte, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]byte, 0, len(r.buf))
	if r.full {
		out = append(out, r.buf[r.start:]...)
		out = append(out, r.buf[:r.start]...)
	} else {
		out = append(out, r.buf...)
	}
	return out, r.total
}
