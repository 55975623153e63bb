package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium/embed"
)

// embedderFlags are --embedder and --embedder-model: hybrid search, off
// unless a URL is given. The endpoint's API key is read from
// ATRIUM_EMBEDDER_KEY only: a flag would show it in the process list.
type embedderFlags struct {
	url, model string
}

func (f *embedderFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.url, "embedder", os.Getenv("ATRIUM_EMBEDDER"), "an OpenAI-compatible embeddings endpoint (Ollama: http://127.0.0.1:11434) for hybrid search; pages' text is sent there, and nothing is contacted without it (env ATRIUM_EMBEDDER; key in ATRIUM_EMBEDDER_KEY)")
	cmd.Flags().StringVar(&f.model, "embedder-model", env("ATRIUM_EMBEDDER_MODEL", embed.DefaultModel), "the embedding model the endpoint runs (env ATRIUM_EMBEDDER_MODEL)")
}

// start turns hybrid search on and runs the embedding worker until the
// returned stop is called (it waits for the worker to end).
func (f *embedderFlags) start(ctx context.Context, a *app) (stop func(), err error) {
	if f.url == "" {
		return func() {}, nil
	}
	c, err := embed.New(embed.Config{URL: f.url, Model: f.model, Key: os.Getenv("ATRIUM_EMBEDDER_KEY")})
	if err != nil {
		return nil, err
	}
	a.Pages.SetEmbedder(c)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Pages.RunEmbeddings(ctx)
	}()
	a.Log.Info("hybrid search on: embedding pages in the background", "endpoint", c.Endpoint(), "model", c.Model())
	return func() { cancel(); <-done }, nil
}
