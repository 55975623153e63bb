# Atrium's commands. `make test` is the one command that runs every test.
GO        ?= go
BIN       ?= bin/atrium
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/atrium-hq/atrium.Version=$(VERSION)
STATICCHECK_VERSION := v0.8.2

.PHONY: build test test-race bench lint conformance interop-deps clean

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/atrium

# PostgreSQL cases run when a server answers (ATRIUM_TEST_POSTGRES, or the local
# one); CI sets ATRIUM_REQUIRE_POSTGRES=1 so that they cannot skip.
test:
	$(GO) test -count=1 -timeout 20m ./...

test-race:
	$(GO) test -count=1 -race -timeout 30m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# Node 24 and the pinned MCP clients (mcporter, Inspector, conformance suite).
interop-deps:
	cd interop && npm ci --no-audit --no-fund

conformance: interop-deps build
	./scripts/conformance.sh $(BIN)

clean:
	rm -rf bin
