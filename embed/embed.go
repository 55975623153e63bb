// Package embed is an OpenAI-compatible embeddings client: POST
// {URL}/v1/embeddings with {"model", "input": [...]}, as Ollama, llama.cpp's
// server, vLLM and text-embeddings-inference answer it. It implements
// atrium.Embedder. It contacts only the URL it is given, only when called,
// and never retries on its own: the caller (the background worker) decides
// when to try again, so an endpoint that is down sees one request per
// backoff step, not a storm.
package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
)

// Defaults.
const (
	DefaultModel   = "nomic-embed-text"
	DefaultBatch   = 32
	DefaultTimeout = 30 * time.Second
	// maxResponse bounds what is read of an answer: 32 inputs of 4096
	// dimensions written as JSON numbers stay well under it.
	maxResponse = 64 << 20
)

// Config configures a Client; zero values are the defaults.
type Config struct {
	URL     string // the endpoint's base: http://127.0.0.1:11434 (a trailing /v1 is accepted)
	Model   string
	Key     string // sent as a bearer token when set
	Batch   int    // inputs per request
	Timeout time.Duration
	HTTP    *http.Client
}

// A Client embeds texts through an OpenAI-compatible endpoint.
type Client struct {
	endpoint string
	model    string
	key      string
	batch    int
	timeout  time.Duration
	http     *http.Client
}

var _ atrium.Embedder = (*Client)(nil)

// New checks cfg and returns its client; it contacts nothing.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(cfg.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, atrium.Errorf(atrium.EInvalid, "embedder URL %q: give the endpoint's base, such as http://127.0.0.1:11434", cfg.URL)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(u.String(), "/"), "/v1")
	c := &Client{endpoint: base + "/v1/embeddings", model: cfg.Model, key: cfg.Key, batch: cfg.Batch, timeout: cfg.Timeout, http: cfg.HTTP}
	if c.model == "" {
		c.model = DefaultModel
	}
	if c.batch <= 0 {
		c.batch = DefaultBatch
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.http == nil {
		// No proxy from the environment: the endpoint is where the user
		// said, and texts of private pages go nowhere else.
		c.http = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4}}
	}
	return c, nil
}

// Model names the vectors' space.
func (c *Client) Model() string { return c.model }

// Endpoint is the URL requests go to.
func (c *Client) Endpoint() string { return c.endpoint }

type request struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type response struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	} `json:"data"`
	Error json.RawMessage `json:"error"`
}

// Embed returns one vector per text, requesting at most Batch texts at a
// time, each request within the timeout. An endpoint that cannot be reached,
// times out or answers 5xx or 429 is EUnavailable (worth trying later); an
// answer that is not what was asked for is EInvalid.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.batch {
		vecs, err := c.embedBatch(ctx, texts[start:min(start+c.batch, len(texts))])
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vecs[0]) != len(out[0]) {
			return nil, atrium.Errorf(atrium.EInvalid, "embedder: vectors of %d and %d dimensions in one answer", len(out[0]), len(vecs[0]))
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.model, Input: texts})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return nil, err // the caller gave up
		}
		return nil, atrium.Errorf(atrium.EUnavailable, "embedder %s: %v", c.endpoint, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, atrium.Errorf(atrium.EUnavailable, "embedder %s: reading the answer: %v", c.endpoint, err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, atrium.Errorf(atrium.EUnavailable, "embedder %s: %s: %s", c.endpoint, resp.Status, snippet(data))
	case resp.StatusCode != http.StatusOK:
		return nil, atrium.Errorf(atrium.EInvalid, "embedder %s: %s: %s", c.endpoint, resp.Status, snippet(data))
	case len(data) > maxResponse:
		return nil, atrium.Errorf(atrium.EInvalid, "embedder %s: an answer over %d bytes", c.endpoint, maxResponse)
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, atrium.Errorf(atrium.EInvalid, "embedder %s: not an embeddings answer: %v", c.endpoint, err)
	}
	if len(r.Data) != len(texts) {
		return nil, atrium.Errorf(atrium.EInvalid, "embedder %s: %d vectors for %d inputs", c.endpoint, len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	dims := len(r.Data[0].Embedding)
	for i, d := range r.Data {
		// Index says which input a vector is for; servers that leave it out
		// send them in order.
		at := d.Index
		if at == 0 && i > 0 && out[0] != nil {
			at = i
		}
		if at < 0 || at >= len(out) || out[at] != nil {
			return nil, atrium.Errorf(atrium.EInvalid, "embedder %s: vector index %d out of place", c.endpoint, d.Index)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != dims {
			return nil, atrium.Errorf(atrium.EInvalid, "embedder %s: vectors of %d and %d dimensions", c.endpoint, dims, len(d.Embedding))
		}
		for _, x := range d.Embedding {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, atrium.Errorf(atrium.EInvalid, "embedder %s: a vector holds %v", c.endpoint, x)
			}
		}
		out[at] = d.Embedding
	}
	return out, nil
}

// snippet is the start of an error answer, for the log.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Sprintf("%q", s)
}
