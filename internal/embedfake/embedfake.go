// Package embedfake is a deterministic embeddings server for tests and
// benchmarks: it speaks the OpenAI-compatible wire format (POST
// /v1/embeddings) on loopback, so the real client and the real binary are
// exercised, with no model. A text's vector is its words hashed into Dims
// buckets (the hashing trick), L2-normalised: texts sharing words are
// close, others are not. A small synonym table maps some words onto one
// another, so a test can show a query found only through the vector side.
// That proves the fusion's mechanics, not any model's quality.
package embedfake

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// DefaultDims is the vectors' length unless Options says otherwise.
const DefaultDims = 256

// Synonyms are the words the fake treats as one: each maps to a shared
// concept, as a real model would place them near each other.
var Synonyms = map[string]string{
	"phone": "device", "phones": "device", "computer": "device", "computers": "device",
	"laptop": "device", "laptops": "device", "device": "device", "devices": "device",
	"older": "snapshot", "version": "snapshot", "snapshots": "snapshot", "snapshot": "snapshot",
	"recover": "restore", "recovery": "restore", "restore": "restore", "undelete": "restore",
}

// Options configure a Server.
type Options struct {
	Dims int
	// Trigrams adds each word's character trigrams (weighted less than the
	// word), so misspellings and word forms land near each other.
	Trigrams bool
}

// A Server is a running fake endpoint.
type Server struct {
	URL      string // http://127.0.0.1:PORT
	dims     int
	trigrams bool
	srv      *http.Server
	ln       net.Listener

	requests atomic.Int64
	inputs   atomic.Int64
	mu       sync.Mutex
	latency  time.Duration
	status   int // answer with this status instead (0: answer)
}

// Start listens on a free loopback port and serves until Close.
func Start(o Options) (*Server, error) {
	return Listen("127.0.0.1:0", o)
}

// Listen serves on addr, which should be a loopback address.
func Listen(addr string, o Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), dims: cmpOr(o.Dims, DefaultDims), trigrams: o.Trigrams, ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func cmpOr(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// Close stops the server and drops its connections.
func (s *Server) Close() error { return s.srv.Close() }

// Requests is how many embedding requests arrived (answered or not).
func (s *Server) Requests() int64 { return s.requests.Load() }

// Inputs is how many texts those requests held.
func (s *Server) Inputs() int64 { return s.inputs.Load() }

// SetLatency delays every answer by d.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	s.latency = d
	s.mu.Unlock()
}

// SetFailure answers every request with status (0: answer normally).
func (s *Server) SetFailure(status int) {
	s.mu.Lock()
	s.status = status
	s.mu.Unlock()
}

type request struct {
	Model string          `json:"model"`
	Input json.RawMessage `json:"input"`
}

type datum struct {
	Object    string    `json:"object"`
	Embedding []float32 `json:"embedding"`
	Index     int       `json:"index"`
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.mu.Lock()
	latency, status := s.latency, s.status
	s.mu.Unlock()
	if latency > 0 {
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
			return
		}
	}
	if status != 0 {
		http.Error(w, `{"error":{"message":"injected failure"}}`, status)
		return
	}
	var req request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, `{"error":{"message":"want {model, input}"}}`, http.StatusBadRequest)
		return
	}
	var inputs []string
	if err := json.Unmarshal(req.Input, &inputs); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			http.Error(w, `{"error":{"message":"input: a string or an array of strings"}}`, http.StatusBadRequest)
			return
		}
		inputs = []string{one}
	}
	s.inputs.Add(int64(len(inputs)))
	data := make([]datum, len(inputs))
	for i, in := range inputs {
		data[i] = datum{Object: "embedding", Embedding: s.Embed(in), Index: i}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": 0, "total_tokens": 0}})
}

// Embed is the vector the server answers for text.
func (s *Server) Embed(text string) []float32 { return Vector(text, s.dims, s.trigrams) }

// Vector is text's vector in dims dimensions: its words (synonyms mapped
// to their concept), and with trigrams their character trigrams, hashed
// with a sign into the buckets, then L2-normalised. An empty text is the
// first axis.
func Vector(text string, dims int, trigrams bool) []float32 {
	v := make([]float32, dims)
	add := func(tok string, w float32) {
		h := fnv.New64a()
		h.Write([]byte(tok))
		x := h.Sum64()
		if x>>63 == 1 {
			w = -w
		}
		v[x%uint64(dims)] += w
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		if c, ok := Synonyms[w]; ok {
			w = c
		}
		add("w:"+w, 1)
		if trigrams && len(w) > 3 {
			for i := 0; i+3 <= len(w); i++ {
				add("t:"+w[i:i+3], 0.25)
			}
		}
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}
