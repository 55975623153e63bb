// Command embedfake serves the deterministic fake embeddings endpoint on a
// loopback address, to try hybrid search without a model:
//
//	go run ./internal/embedfake/cmd/embedfake -addr 127.0.0.1:11500
//	atrium serve --embedder http://127.0.0.1:11500
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/atrium-hq/atrium/internal/embedfake"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:11500", "loopback address to listen on")
	dims := flag.Int("dims", embedfake.DefaultDims, "vector dimensions")
	flag.Parse()
	s, err := embedfake.Listen(*addr, embedfake.Options{Dims: *dims, Trigrams: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fake embedder at", s.URL)
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	<-c
	_ = s.Close()
}
