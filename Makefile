# redline: the two set-up commands in the README are `make lab` and `make test`.
# Both install what they need on a fresh Debian machine (as root).

GO ?= $(shell command -v go || echo /usr/local/go/bin/go)
PKGS = redis-server redis-tools iproute2 numactl libtcmalloc-minimal4 libmimalloc2.0 chromium openssh-server openssh-client linux-perf
BIN = bin/redline

.PHONY: setup build lab test test-short fuzz bench-compare vet fmt

setup:
	@missing=""; for p in $(PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; fi
	$(GO) mod download

build:
	$(GO) build -o $(BIN) ./cmd/redline

# The main job: a before/after experiment against a redis-server that redline starts.
lab: setup build
	./$(BIN) lab

# Every test, against real redis-servers on loopback. Tests that write the
# host run only with REDLINE_TEST_HOST_WRITES=1 (set by .ci/run).
test: setup
	$(GO) mod tidy -diff
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 12m ./...

# The quick loop while editing: parsers, goldens, planners; no real servers,
# namespaces or kill tests (testutil.Heavy).
test-short:
	$(GO) test -count=1 -short ./...

fuzz:
	./scripts/fuzz-all 30s

bench-compare: build
	./scripts/bench-compare

fmt:
	gofmt -w $$(git ls-files '*.go')
