# redline: the README's set-up is `apt-get install make` (the one package it assumes
# besides Debian 12, root and Go), then `make lab` and `make test`. Both install what they
# need on a fresh Debian 12 machine (as root): make lab only what the main job needs, make
# test (through test-deps) what the tests need besides. scripts/fresh-check (make
# fresh-check) runs that set-up in a new minimal Debian 12 root.

GO ?= $(shell command -v go || echo /usr/local/go/bin/go)
# The main job's packages, without recommends: the server binary (redis-tools ships it as
# redis-check-rdb, without a service; redline runs it as redis-server; skipped when a
# redis-server is on PATH) and ip, for the lab's network namespace. Not redis-server: its
# package starts a second Redis on 6379 as a service.
LAB_PKGS = redis-tools iproute2
# Only the tests need these (docs/README: not for a production host). Each program or file
# a test takes from the machine is declared once, with its package, in
# internal/testutil/needs.go; make check-needs checks that every declared package is here
# and, once installed, provides it (dpkg -L). By use:
# the host: numactl and the allocators (server variants), ethtool (offloads in namespaces),
# util-linux and procps (taskset, unshare, setpriv, pgrep, sysctl), perf (profile), irqbalance
# (steer's ban test starts its own), ssh (--ssh tests);
TEST_PKGS_HOST = numactl libtcmalloc-minimal4 libmimalloc2.0 ethtool util-linux procps \
	linux-perf irqbalance openssh-server openssh-client
# redline build and go test -race's cgo: Debian's redis source (apt-get source, signed by
# Debian's keyring; dpkg-source, xz), gcc and libc6-dev, clang with lld and llvm-profdata
# (thin LTO, PGO; lld-14 named too: it ships the ld.lld that lld links to; libclang-rt-14-dev,
# clang's profile runtime, which clang does not pull in without recommends), bolt-16 (BOLT), the
# system jemalloc Debian's source links;
TEST_PKGS_BUILD = make gcc libc6-dev clang lld lld-14 llvm libclang-rt-14-dev bolt-16 apt dpkg-dev xz-utils \
	libjemalloc-dev debian-archive-keyring
# reports and fleets: chromium (screenshots), cmark-gfm (renders the Markdown reports made
# from hostile values, as a viewer would), promtool (prometheus: doctor's textfile, the
# alert rules), the Ansible collection (run, linted, its templates rendered by python3),
# groff-base (the man pages formatted with warnings on);
TEST_PKGS_REPORT = chromium cmark-gfm prometheus ansible-core ansible-lint python3-minimal \
	python3-jinja2 python3-yaml groff-base
# CI: qemu-user-static and file (arm64 tests, the static-binary check), mmdebstrap
# (scripts/fresh-check's Debian root).
TEST_PKGS_CI = qemu-user-static file mmdebstrap
TEST_PKGS = $(LAB_PKGS) $(TEST_PKGS_HOST) $(TEST_PKGS_BUILD) $(TEST_PKGS_REPORT) $(TEST_PKGS_CI)
# test-deps starts no service: its install runs under a policy-rc.d that refuses every start
# (where the machine has none of its own), and these two are disabled after, as they would
# start at the next boot: irqbalance's daemon moves every IRQ under the steer and tune tests,
# prometheus' scrapes and listens. The tests start their own irqbalance and sshd.
QUIET_SERVICES = irqbalance prometheus
POLICY_RC = /usr/sbin/policy-rc.d
APT_INSTALL = apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends
BIN = bin/redline
# make install puts the binary, the man pages and shell completions under
# $(DESTDIR)$(PREFIX): /usr/local/bin/redline is on PATH on every Linux.
PREFIX ?= /usr/local
DESTDIR ?=
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS = -buildid= -X redline/internal/cli.version=$(VERSION) -X redline/internal/cli.commit=$(COMMIT)
# Static (no cgo, no glibc version to match on a server host) and reproducible: the same
# commit and Go version give the same bytes (-trimpath, no build id, no VCS stamp).
GOBUILD = CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags "$(LDFLAGS)"
RELEASE_ARCHS = amd64 arm64

.PHONY: setup test-deps check-needs fresh-check build release install uninstall lab test test-race test-cli-race test-cli test-plain test-short test-arm64 fuzz bench-compare vet fmt

setup:
	@missing=""; for p in $(LAB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if command -v redis-server >/dev/null; then missing=$$(echo $$missing | sed 's/redis-tools//'); fi; \
	if [ -n "$$(echo $$missing)" ]; then $(APT_INSTALL) $$missing; fi
	$(GO) mod download

# What the tests need besides; on a development or CI machine, not a production host.
# redis-server on PATH is a link to redis-tools' binary, as Debian's redis-server package
# makes it, without that package's service.
test-deps: setup
	@missing=""; for p in $(TEST_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	[ -n "$$missing" ] || exit 0; \
	policy=""; if [ ! -e $(POLICY_RC) ]; then \
		policy=$(POLICY_RC); trap 'rm -f $(POLICY_RC)' EXIT; trap 'exit 130' INT TERM; \
		printf '#!/bin/sh\nexit 101\n' > $$policy; chmod 0755 $$policy; fi; \
	$(APT_INSTALL) $$missing; rc=$$?; \
	for s in $(QUIET_SERVICES); do case " $$missing " in *" $$s "*) \
		! command -v systemctl >/dev/null || systemctl disable --now $$s >/dev/null 2>&1 || true;; esac; done; \
	exit $$rc
	command -v redis-server >/dev/null || ln -s /usr/bin/redis-check-rdb /usr/local/bin/redis-server

# After test-deps: every need internal/testutil/needs.go declares is from a package in
# TEST_PKGS, and installed here with the program or file in its file list (CI=true: a
# package not installed fails it, as in CI). Under -race, as make test runs: that needs cgo,
# so a C compiler and libc's headers.
check-needs: test-deps
	CI=true $(GO) test -race -count=1 -run '^TestNeeds' ./internal/testutil

# The README's set-up on a new minimal Debian 12 root (mmdebstrap, from test-deps): make
# lab, make test-deps and check-needs there; about 10 minutes, mostly downloads.
fresh-check:
	./scripts/fresh-check

build:
	$(GOBUILD) -o $(BIN) ./cmd/redline

# bin/redline-linux-ARCH for each of RELEASE_ARCHS (the --ssh push takes the one that matches
# the server host's uname -m from beside the running binary) and their SHA256SUMS.
release:
	for a in $(RELEASE_ARCHS); do GOARCH=$$a $(GOBUILD) -o bin/redline-linux-$$a ./cmd/redline || exit 1; done
	cd bin && sha256sum $(patsubst %,redline-linux-%,$(RELEASE_ARCHS)) > SHA256SUMS && cat SHA256SUMS

# The man pages come from the commands themselves (redline man DIR), the
# completions from cobra (redline completion bash|zsh|fish); the man pages point at
# docs/*.md where they are installed (--docdir), never at the source tree.
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/redline \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/redline
	./$(BIN) man --docdir $(PREFIX)/share/doc/redline $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/redline
	./$(BIN) completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/redline
	./$(BIN) completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_redline
	./$(BIN) completion fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/redline.fish

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/redline
	rm -f $(DESTDIR)$(PREFIX)/bin/redline $(DESTDIR)$(PREFIX)/share/man/man1/redline*.1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/redline \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_redline \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/redline.fish

# The main job: a before/after experiment against a redis-server that redline starts.
lab: setup build
	./$(BIN) lab

# Every test, against real redis-servers on loopback. Tests that write the
# host run only with REDLINE_TEST_HOST_WRITES=1 (set by .ci/run). The timeout
# is a guard against a hung test, not a speed bound (40m: on a fresh machine internal/cli
# compiles Redis from a cold build cache in three tests at once).
# -race where the code under test runs goroutines of its own against each other (RACE_PKGS):
# bench (the load's clients, the workers' barrier and merge), resp, steer (the daemon, its
# sampler and retargeting), remote and serverhost (sessions and their streams), host (the dumps
# beside the reader), netns (the locked thread), lab (the noise sampler and probes beside the
# runs), doctor (a cluster's nodes asked at once), profile and redisserver (their waiters),
# tune (connections shared by a cluster's changes), testutil (the scripted RESP server); and
# internal/cli's tests of commands with goroutines of their own (CLI_RACE_TESTS: bench
# --workers, steer, profile, the stop signals and closed outputs). Everything else runs once,
# without -race: internal/cli's other tests (orchestration of processes and servers),
# autotune (its simulations are one goroutine of arithmetic), the builds (compilers in
# processes of their own), the collection (ansible), stats, reports, parsers and plans.
# The groups run at once (their tests mostly wait on servers, processes and durations);
# -parallel 4 for the tests marked t.Parallel, which wait on their own servers.
RACE_PKGS = ./internal/bench ./internal/resp/... ./internal/steer/... ./internal/remote/... \
	./internal/serverhost/... ./internal/host/... ./internal/netns/... ./internal/lab \
	./internal/doctor ./internal/profile ./internal/redisserver ./internal/tune \
	./internal/testutil/...
CLI_RACE_TESTS = ^(TestBenchWorkers|TestBenchSSHWorkers|TestWorker|TestSteer|TestProfile|TestLabStops|TestLaterSignal|TestRepeatedStopSignals|TestBenchClosedStdout|TestBenchStoppedBeforeMeasuring|TestBenchSignalWhileStarting|TestLabRepeatedSignals)
PLAIN_PKGS = $(filter-out $(shell $(GO) list $(RACE_PKGS)) redline/internal/cli,$(shell $(GO) list ./...))
GOTEST = $(GO) test -count=1 -parallel 4 -timeout 40m
test: check-needs
	$(GO) mod tidy -diff
	$(GO) vet ./...
	$(MAKE) --no-print-directory -k -j4 --output-sync=target test-race test-cli-race test-cli test-plain

test-race:
	$(GOTEST) -race $(RACE_PKGS)

test-cli-race:
	$(GOTEST) -race -run '$(CLI_RACE_TESTS)' ./internal/cli

test-cli:
	$(GOTEST) -skip '$(CLI_RACE_TESTS)' ./internal/cli

test-plain:
	$(GOTEST) $(PLAIN_PKGS)

# The quick loop while editing: parsers, goldens, planners; no real servers,
# namespaces or kill tests (testutil.Heavy).
test-short:
	$(GO) test -count=1 -short ./...

# The tests that need no root, namespaces or real servers, built for arm64 and run under
# qemu-user (qemu-user-static, from test-deps), -short: the parsers and fixture trees (host,
# kernfmt, cpuset), the doctor on fixtures, steer's decoder and engine, statistics, report
# goldens, plans and scenarios (placement, change, tune, lab, labdata), RESP and the bench
# command line. Left out: the tests of this machine's live state (TestLive*: an x86 host,
# read through qemu's syscall translation) and tune/beneath (openat2's RESOLVE_ flags are the
# kernel's, not what qemu-user passes on).
ARM64_PKGS = ./internal/host/... ./internal/kernfmt/... ./internal/cpuset/... ./internal/doctor/... \
	./internal/steer/... ./internal/stats/... ./internal/report/... ./internal/placement/... \
	./internal/change/... ./internal/tune ./internal/tune/simfs ./internal/lab/... ./internal/labdata/... \
	./internal/resp/... ./internal/bench/cmdline/...
test-arm64:
	env -u REDLINE_TEST_HOST_WRITES GOARCH=arm64 CGO_ENABLED=0 $(GO) test -short -count=1 \
		-exec qemu-aarch64-static -skip '^TestLive' $(ARM64_PKGS)

fuzz:
	./scripts/fuzz-all 30s

bench-compare: build
	./scripts/bench-compare

fmt:
	gofmt -w $$(git ls-files '*.go')
