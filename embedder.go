package atrium

import "context"

// An Embedder turns texts into vectors whose cosine says how close their
// meanings are: what hybrid search ranks sections by besides their words.
// Implementations reach a model out of process (package embed); none is
// used unless one is configured.
type Embedder interface {
	// Embed returns one vector per text, in order, all of one length.
	// An error with code EUnavailable means the model could not be reached
	// or did not answer in time; the texts may be sent again later.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the vectors' space: vectors of different models are
	// never compared.
	Model() string
}
