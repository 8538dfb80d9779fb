# redline: the two set-up commands in the README are `make lab` and `make test`.
# Both install what they need on a fresh Debian machine (as root).

GO ?= $(shell command -v go || echo /usr/local/go/bin/go)
PKGS = redis-server redis-tools iproute2 numactl libtcmalloc-minimal4 libmimalloc2.0 chromium openssh-server openssh-client linux-perf
BIN = bin/redline
# make install puts the binary, the man pages and shell completions under
# $(DESTDIR)$(PREFIX): /usr/local/bin/redline is on PATH on every Linux.
PREFIX ?= /usr/local
DESTDIR ?=
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS = -X redline/internal/cli.version=$(VERSION) -X redline/internal/cli.commit=$(COMMIT)

.PHONY: setup build install uninstall lab test test-short fuzz bench-compare vet fmt

setup:
	@missing=""; for p in $(PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; fi
	$(GO) mod download

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/redline

# The man pages come from the commands themselves (redline man DIR), the
# completions from cobra (redline completion bash|zsh|fish).
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/redline
	./$(BIN) man $(DESTDIR)$(PREFIX)/share/man/man1
	./$(BIN) completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/redline
	./$(BIN) completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_redline
	./$(BIN) completion fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/redline.fish

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/redline $(DESTDIR)$(PREFIX)/share/man/man1/redline*.1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/redline \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_redline \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/redline.fish

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
