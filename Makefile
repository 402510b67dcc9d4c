# clawhost — run `make help` for the targets.
SHELL := /bin/bash
GO ?= go
# clawhost version prints these: the v* tag (without its v) or the commit,
# the commit, and the commit's date (not the build's: make dist is
# reproducible, and so is make build).
VERSION ?= $(shell git describe --tags --match 'v[0-9]*' --always --dirty 2>/dev/null | sed 's/^v//' || echo dev)
COMMIT := $(shell git rev-parse --short=7 HEAD 2>/dev/null)
DATE := $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)
# The binaries are static (no cgo: the SQLite driver is pure Go, and the
# net and os/user packages have pure-Go fallbacks): no dynamic loader and
# no libc mapped at each start. Measured: exec → exit 10.7 vs 13.9 ms for
# clawhost, 6.6 vs 8.4 ms for a plugin; the idle RSS of host + Telegram +
# web chat 64.4 vs 69.1 MB. Tests keep cgo (the race detector needs it).
# grpcnotrace leaves out gRPC's golang.org/x/net/trace: it renders
# html/template pages, and a reachable template execution makes the linker
# keep every exported method of every type (reflection may call any). With
# the sdk serving go-plugin's protocol itself (sdk/internal/wire/serve.go)
# a plugin binary no longer links net/rpc either, for the same reason:
# ping 13.3 -> 7.7 MB, telegram 15.3 -> 11.0, whatsapp 25.9 -> 19.5.
BUILD := CGO_ENABLED=0 $(GO) build -trimpath -tags grpcnotrace -ldflags '$(LDFLAGS)'
BIN := bin
TOOLS := $(BIN)/tools/buf $(BIN)/tools/deadcode
CLAUDE_VERSION := 2.1.330
CLAUDE_DIR := .cache/claude-cli
CLAUDE_BIN := $(CLAUDE_DIR)/node_modules/.bin/claude
# uPlot, the chart library of the status page, vendored into
# core/admin/assets (embedded in the binary): the npm package's version and
# the SHA-256 of its tarball (make uplot fetches it again and checks both).
UPLOT_VERSION := 1.6.32
UPLOT_SHA256 := 4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d
# Dendrite, the real Matrix homeserver the matrix plugin's tests run
# (plugins/matrix/matrixtest): built from the Go module proxy, the
# Apache-2.0 github.com/matrix-org/dendrite (not the AGPL fork), pure Go
# (its SQLite is modernc's without cgo), from tools/dendrite/go.mod: the
# version there and a newer modernc.org/sqlite than v0.13.8 pins (the
# module's comment says why). The stamp is named after go.sum's hash, so
# a change there rebuilds.
DENDRITE_DIR := .cache/dendrite
DENDRITE_STAMP := $(DENDRITE_DIR)/built-$(firstword $(shell sha256sum tools/dendrite/go.sum 2>/dev/null | cut -c1-16))

# Plugin binaries: plugins/<name>/cmd/clawhost-<name> and examples/<name>
# (Go: main.go; Python: __main__.py).
# First-party plugins that are modules of their own outside go.work (their
# dependencies cannot share the daemon's build list), built from their
# directory with GOWORK=off: the Matrix plugin (plugins/matrix/go.mod says why).
# They build with the goolm tag too (mautrix's pure-Go crypto).
SEPARATE_PLUGINS := plugins/matrix/cmd/clawhost-matrix
comma := ,
PLUGIN_CMDS := $(filter-out $(SEPARATE_PLUGINS),$(wildcard plugins/*/cmd/clawhost-*))
GO_EXAMPLES := $(patsubst %/main.go,%,$(wildcard examples/*/main.go))
PY_EXAMPLES := $(patsubst %/__main__.py,%,$(wildcard examples/*/__main__.py))
# The Python the Python examples run with: Debian's, where python3-grpcio lives.
PYTHON ?= /usr/bin/python3

# Go modules of the repository: the daemon (with the first-party plugins and
# examples), the sdk, the markup renderer and the generated protocol: the
# modules of go.work.
# `go test ./...` does not enter a nested module (in workspace mode neither),
# so the test and vet targets run each one, and each package once.
MODULES := . sdk markup proto

.PHONY: help build dist py-examples run test test-go bench chaos proto check tidy fmt deps claude-cli uplot dendrite browser python-grpc postgres bubblewrap systemd tmux voice peer clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/clawhost, its sandbox helper bin/clawhost-sandbox, and every plugin and example as bin/clawhost-<name>
	@mkdir -p $(BIN)
	$(BUILD) -o $(BIN)/clawhost ./core/cmd/clawhost
	$(BUILD) -o $(BIN)/clawhost-sandbox ./core/cmd/clawhost-sandbox
	@for d in $(PLUGIN_CMDS); do echo "$(GO) build -o $(BIN)/$$(basename $$d) ./$$d"; $(BUILD) -o $(BIN)/$$(basename $$d) ./$$d || exit 1; done
	@for d in $(SEPARATE_PLUGINS); do m=$${d%%/cmd/*}; echo "(cd $$m && GOWORK=off $(GO) build -o $(abspath $(BIN))/$$(basename $$d) ./$${d#$$m/})"; \
	  (cd $$m && GOWORK=off $(subst -tags grpcnotrace,-tags grpcnotrace$(comma)goolm,$(BUILD)) -o $(abspath $(BIN))/$$(basename $$d) ./$${d#$$m/}) || exit 1; done
	@for d in $(GO_EXAMPLES); do n=$$(basename $$d); echo "$(GO) build -o $(BIN)/clawhost-$$n ./$$d"; $(BUILD) -o $(BIN)/clawhost-$$n ./$$d || exit 1; done
	@$(MAKE) --no-print-directory py-examples

# The release archives (core/cmd/dist): for linux/amd64, linux/arm64,
# darwin/amd64 and darwin/arm64, static binaries of the host and the
# first-party plugins with LICENSE, README.md, CHANGELOG.md and config.hcl in
# dist/clawhost_<version>_<os>_<arch>.tar.gz, and dist/SHA256SUMS;
# reproducible (the same commit gives the same bytes). The examples are not
# in them. DIST_ARGS adds flags, e.g. DIST_ARGS='-platforms linux/amd64'.
DIST_ARGS ?=
dist: ## build the release archives and SHA256SUMS into dist/ (reproducible; DIST_ARGS='-platforms linux/amd64')
	$(GO) run ./core/cmd/dist -out dist -version $(VERSION) $(DIST_ARGS)

# A Python example (a directory with __main__.py) becomes one executable zip,
# bin/clawhost-<name>, made by `clawhost plugin package` (what an author
# outside the checkout runs): its .py files plus the descriptor set of the
# protocol, from which the plugin builds its message classes at run time,
# so there is no generated Python code to keep in sync. It runs with
# $(PYTHON) and needs Debian's python3-grpcio and python3-protobuf (make deps).
py-examples: ## build the Python examples as bin/clawhost-<name> (executable zips)
	@mkdir -p $(BIN)
	@[ -x $(PYTHON) ] || { echo "skipping the Python examples: no $(PYTHON) (apt-get install python3, or set PYTHON)"; exit 0; }; \
	for d in $(PY_EXAMPLES); do n=$$(basename $$d); \
	  { [ -x $(BIN)/clawhost ] || $(BUILD) -o $(BIN)/clawhost ./core/cmd/clawhost; } && \
	  $(BIN)/clawhost plugin package -python '$(PYTHON)' -o $(BIN)/clawhost-$$n $$d || exit 1; done

# clawhost finds the claude CLI itself, as it does without make: PATH, then
# claude's install places, .cache/claude-cli among them (core/internal/installpath).
run: build ## run clawhost on the default config.hcl (the claude CLI on PATH, else where its installers or make claude-cli put it)
	./$(BIN)/clawhost -config config.hcl

deps: claude-cli dendrite browser python-grpc postgres bubblewrap systemd tmux voice ## install what the tests need (claude CLI from npm; Chromium, Python gRPC, PostgreSQL, bubblewrap, systemd-analyze, tmux, espeak-ng and ffmpeg from Debian)

claude-cli: $(CLAUDE_BIN) ## install the real claude CLI into .cache/claude-cli (npm)
$(CLAUDE_BIN):
	@command -v npm >/dev/null || { echo "npm is needed for the claude CLI tests (apt-get install npm)"; exit 1; }
	npm install --prefix $(CLAUDE_DIR) --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code@$(CLAUDE_VERSION)
	@$(CLAUDE_BIN) --version

uplot: ## fetch uPlot $(UPLOT_VERSION) from npm again, check its tarball's SHA-256 and copy its built files into core/admin/assets
	@command -v npm >/dev/null || { echo "npm is needed to fetch uPlot (apt-get install npm)"; exit 1; }
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  (cd "$$tmp" && npm pack --silent --loglevel=error uplot@$(UPLOT_VERSION) >/dev/null) && \
	  echo "$(UPLOT_SHA256)  $$tmp/uplot-$(UPLOT_VERSION).tgz" | sha256sum -c --quiet - && \
	  tar -xzf "$$tmp/uplot-$(UPLOT_VERSION).tgz" -C "$$tmp" && \
	  cp "$$tmp/package/dist/uPlot.iife.min.js" "$$tmp/package/dist/uPlot.min.css" core/admin/assets/ && \
	  cp "$$tmp/package/LICENSE" core/admin/assets/uPlot.LICENSE && \
	  echo "core/admin/assets: uPlot $(UPLOT_VERSION) (sha256 $(UPLOT_SHA256))"
	@git diff --stat -- core/admin/assets
dendrite: $(DENDRITE_STAMP) ## build the Matrix homeserver Dendrite into .cache/dendrite for the matrix tests (Go module proxy)
$(DENDRITE_STAMP): tools/dendrite/go.mod tools/dendrite/go.sum
	@mkdir -p $(DENDRITE_DIR)
	@rm -f $(DENDRITE_DIR)/built-* $(DENDRITE_DIR)/v0.*
	cd tools/dendrite && GOWORK=off CGO_ENABLED=0 $(GO) build -o $(abspath $(DENDRITE_DIR))/ github.com/matrix-org/dendrite/cmd/dendrite \
	  github.com/matrix-org/dendrite/cmd/generate-config github.com/matrix-org/dendrite/cmd/generate-keys
	@touch $@

browser: ## install Debian's chromium for the browser tests (needs root or sudo)
	@command -v chromium >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }
	@chromium --version

python-grpc: ## install Debian's python3-grpcio and python3-protobuf for the Python example (needs root or sudo)
	@$(PYTHON) -c 'import grpc, google.protobuf' 2>/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq python3 python3-grpcio python3-protobuf >/dev/null; }
	@$(PYTHON) -c 'import grpc, google.protobuf; print("python3-grpcio", grpc.__version__, "protobuf", google.protobuf.__version__)'

# bubblewrap, the sandbox claude runs in (agent { sandbox = "auto" });
# the sandbox tests need it.
bubblewrap: ## install Debian's bubblewrap for the sandbox tests (needs root or sudo)
	@command -v bwrap >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq bubblewrap >/dev/null; }
	@bwrap --version

# systemd-analyze, which checks the unit `clawhost service install` writes
# (systemd-analyze verify); Debian's systemd package has it. Installing it
# in a container does not make systemd the init: only the tools come.
systemd: ## install Debian's systemd for systemd-analyze verify in the service tests (needs root or sudo)
	@command -v systemd-analyze >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq systemd >/dev/null; }
	@systemd-analyze --version | head -1

# tmux, the real terminal clawhost init's end-to-end test types into.
tmux: ## install Debian's tmux for the terminal tests of clawhost init (needs root or sudo)
	@command -v tmux >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq tmux >/dev/null; }
	@tmux -V

# espeak-ng and ffmpeg, the voice plugin's default text-to-speech and its
# audio converter; the voice tests make real voice notes with them and
# check the plugin's with ffprobe (part of ffmpeg).
voice: ## install Debian's espeak-ng and ffmpeg for the voice plugin and its tests (needs root or sudo)
	@{ command -v espeak-ng && command -v ffmpeg && command -v ffprobe; } >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq espeak-ng ffmpeg >/dev/null; }
	@espeak-ng --version | head -1
	@ffmpeg -version | head -1

# The PostgreSQL server for the store's tests (core/store/postgres/pgtest
# starts a throwaway cluster from it); Debian puts it in
# /usr/lib/postgresql/<version>/bin, off PATH.
postgres: ## install Debian's postgresql for the PostgreSQL store tests (needs root or sudo)
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null; }
	@$$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/initdb --version

test: build deps ## run all tests, with the real claude CLI, a headless Chromium and the Python example
	@for m in $(MODULES); do echo "(cd $$m && $(GO) test ./...)"; \
	  (cd $$m && CLAWHOST_REQUIRE_CLAUDE=1 CLAWHOST_REQUIRE_POSTGRES=1 CLAWHOST_REQUIRE_BROWSER=1 CLAWHOST_REQUIRE_PYTHON=1 CLAWHOST_REQUIRE_SYSTEMD=1 CLAWHOST_REQUIRE_TMUX=1 CLAWHOST_REQUIRE_VOICE=1 CLAWHOST_REQUIRE_DENDRITE=1 CLAWHOST_CLAUDE_BIN=$(CURDIR)/$(CLAUDE_BIN) \
	  CLAWHOST_BIN_DIR=$(abspath $(BIN)) $(GO) test -count=1 -timeout 30m ./...) || exit 1; done
	@for d in $(SEPARATE_PLUGINS); do m=$${d%%/cmd/*}; echo "(cd $$m && GOWORK=off $(GO) test -tags goolm ./...)"; \
	  (cd $$m && GOWORK=off CLAWHOST_REQUIRE_CLAUDE=1 CLAWHOST_REQUIRE_DENDRITE=1 CLAWHOST_CLAUDE_BIN=$(CURDIR)/$(CLAUDE_BIN) \
	  CLAWHOST_BIN_DIR=$(abspath $(BIN)) $(GO) test -tags goolm -count=1 -timeout 30m ./...) || exit 1; done

test-go: build ## run the tests that need only Go (real-CLI and browser tests skip)
	@for m in $(MODULES); do echo "(cd $$m && $(GO) test ./...)"; \
	  (cd $$m && CLAWHOST_BIN_DIR=$(abspath $(BIN)) $(GO) test -count=1 ./...) || exit 1; done
	@for d in $(SEPARATE_PLUGINS); do m=$${d%%/cmd/*}; echo "(cd $$m && GOWORK=off $(GO) test -tags goolm ./...)"; \
	  (cd $$m && GOWORK=off CLAWHOST_BIN_DIR=$(abspath $(BIN)) $(GO) test -tags goolm -count=1 ./...) || exit 1; done

# Every benchmark of every module, then one table of the figures the
# project holds itself to (core/cmd/benchreport): goal, value, pass/fail.
# The raw output stays in bin/bench.txt; BENCH_ARGS adds go test flags
# (e.g. BENCH_ARGS='-count 3' for medians of three), passed as written: a
# "$" in it (-bench 'OutboundTelegram$') reaches go test, not make.
#
# BENCH_BASE=<tag or commit> (e.g. v0.1.0) measures that build beside the
# tree: it is checked out in a temporary worktree (bin/bench-base, removed
# at the end) and built there, and the two run the same benchmarks in
# BENCH_ROUNDS interleaved rounds (base, tree, base, tree, …: the machine's
# drift falls on both alike); the table shows both medians and the change,
# marked "*" where the benchmark's own code differs between the two.
# The base's raw output is bin/bench-base.txt.
#
# The peer benchmarks (core/e2e/peer_bench_test.go: clawhost beside
# cc-connect and PicoClaw in one run, issue 84's goals) run for the peers
# bin/peer holds: `make peer CC_CONNECT_SRC=<checkout> PICOCLAW_SRC=<checkout>`
# builds them as their docs do, from copies (the checkouts are left as
# they are), cc-connect with core/e2e/testdata/cc-connect-bot-api.patch
# (the fake Bot API's address from CC_TG_SERVER).
BENCH_ARGS ?=
BENCH_BASE ?=
BENCH_ROUNDS ?= 3
CC_CONNECT_SRC ?=
PICOCLAW_SRC ?=
PEER_ENV = CLAWHOST_PEER_CC_CONNECT=$(wildcard $(abspath $(BIN))/peer/cc-connect) CLAWHOST_PEER_PICOCLAW=$(wildcard $(abspath $(BIN))/peer/picoclaw)
bench: build claude-cli ## run the benchmarks; ends with the table of goals and values (raw output in bin/bench.txt; BENCH_BASE=v0.1.0 beside an earlier build)
ifeq ($(strip $(BENCH_BASE)),)
	@rm -f $(BIN)/bench.txt; set -o pipefail; for m in $(MODULES); do echo "(cd $$m && $(GO) test -bench . ./...)"; \
	  (cd $$m && CLAWHOST_CLAUDE_BIN=$(CURDIR)/$(CLAUDE_BIN) CLAWHOST_BIN_DIR=$(abspath $(BIN)) $(PEER_ENV) \
	  $(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 30m $(value BENCH_ARGS) ./...) | tee -a $(BIN)/bench.txt || exit 1; done
	@echo; $(GO) run ./core/cmd/benchreport $(BIN)/bench.txt
else
	@set -eo pipefail; base=$(abspath $(BIN))/bench-base; rm -f $(BIN)/bench.txt $(BIN)/bench-base.txt; \
	  git worktree remove --force $$base 2>/dev/null || rm -rf $$base; \
	  git worktree add --detach $$base '$(BENCH_BASE)'; trap "git worktree remove --force $$base" EXIT; \
	  [ -e $$base/.cache ] || [ ! -e .cache ] || ln -s $(CURDIR)/.cache $$base/.cache; \
	  $(MAKE) --no-print-directory -C $$base build; \
	  for r in $$(seq $(BENCH_ROUNDS)); do for side in base tree; do \
	    if [ $$side = base ]; then root=$$base out=$(BIN)/bench-base.txt; else root=$(CURDIR) out=$(BIN)/bench.txt; fi; \
	    for m in $(MODULES); do [ -d $$root/$$m ] || continue; echo "round $$r/$(BENCH_ROUNDS), $$side: (cd $$m && $(GO) test -bench . ./...)"; \
	      (cd $$root/$$m && CLAWHOST_CLAUDE_BIN=$(CURDIR)/$(CLAUDE_BIN) CLAWHOST_BIN_DIR=$$root/$(BIN) $(PEER_ENV) \
	      $(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 30m $(value BENCH_ARGS) ./...) | tee -a $$out; done; \
	  done; done
	@echo; $(GO) run ./core/cmd/benchreport -base $(BIN)/bench-base.txt -base-name '$(BENCH_BASE)' -base-rev '$(BENCH_BASE)' $(BIN)/bench.txt
endif

peer: ## build the peer gateways for the side-by-side benchmarks into bin/peer (CC_CONNECT_SRC=<checkout>, PICOCLAW_SRC=<checkout>)
	@test -n "$(CC_CONNECT_SRC)$(PICOCLAW_SRC)" || { echo "make peer CC_CONNECT_SRC=<a checkout of github.com/chenhg5/cc-connect> PICOCLAW_SRC=<a checkout of github.com/sipeed/picoclaw> (either)" >&2; exit 2; }
	@set -e; src=$(abspath $(BIN))/peer/src; \
	if [ -n "$(CC_CONNECT_SRC)" ]; then rm -rf $$src && mkdir -p $$src; \
	  tar -C '$(CC_CONNECT_SRC)' --exclude=.git -cf - . | tar -C $$src -xf -; \
	  (cd $$src && GIT_CEILING_DIRECTORIES=$(abspath $(BIN))/peer git apply $(CURDIR)/core/e2e/testdata/cc-connect-bot-api.patch && \
	   GOWORK=off GOFLAGS=-mod=mod $(GO) build -tags no_web -ldflags '-s -w' -o $(abspath $(BIN))/peer/cc-connect ./cmd/cc-connect); \
	  echo "built $(BIN)/peer/cc-connect"; fi; \
	if [ -n "$(PICOCLAW_SRC)" ]; then rm -rf $$src && mkdir -p $$src; \
	  tar -C '$(PICOCLAW_SRC)' --exclude=.git -cf - . | tar -C $$src -xf -; \
	  (cd $$src && CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=mod $(GO) build -tags goolm,stdjson -ldflags '-s -w' -o $(abspath $(BIN))/peer/picoclaw ./cmd/picoclaw); \
	  echo "built $(BIN)/peer/picoclaw"; fi; \
	rm -rf $$src

# The chaos campaign (core/chaos): the real clawhost and telegram plugin
# against the fake Bot API (and the slack plugin against the fake Slack for
# slack-plugin-kill9) and a fake claude, killed and faulted at random;
# one table, non-zero exit on any lost or doubled message, re-run of a
# finished turn or orphan process. ~15 min with the default trials; e.g.
# make chaos CHAOS_ARGS='-chaos.seed=42 -chaos.trials=host-kill9=20 -chaos.only=kill'
CHAOS_ARGS ?=
chaos: build ## run the chaos campaign (kills, API and store faults; CHAOS_ARGS='-chaos.seed=N -chaos.trials=host-kill9=100,...')
	CLAWHOST_BIN_DIR=$(abspath $(BIN)) $(GO) test -count=1 -v -timeout 60m -run '^TestChaos$$' ./core/chaos -args -chaos.long $(CHAOS_ARGS)

# buf runs from the root so that `go tool protoc-gen-go` resolves in the
# root module (which pins the protoc plugins); the proto module itself
# requires only grpc and protobuf.
proto: $(TOOLS) ## regenerate proto/gen with the pinned buf and protoc plugins
	$(BIN)/tools/buf generate proto --template proto/buf.gen.yaml

# The pinned buf and deadcode (tools/go.mod, a module outside go.work: its
# dependencies would raise the daemon's) built into bin/tools; go.work's
# workspace mode refuses `go tool -modfile`, hence GOWORK=off.
$(TOOLS): tools/go.mod tools/go.sum
	@mkdir -p $(BIN)/tools
	cd tools && GOWORK=off $(GO) build -o ../$(BIN)/tools/ github.com/bufbuild/buf/cmd/buf golang.org/x/tools/cmd/deadcode

# go mod tidy ignores go.work: each module's tidy resolves the others at
# the versions its go.mod requires, which core/cmd/modproxy serves from
# this tree (their go.sum lines are left out: they change with every edit).
tidy: ## go mod tidy every module (root, sdk, proto against this tree's; tools, tools/dendrite; plugins/matrix)
	$(GO) run ./core/cmd/modproxy -tidy
	cd tools && GOWORK=off $(GO) mod tidy
	cd tools/dendrite && GOWORK=off $(GO) mod tidy
	@for d in $(SEPARATE_PLUGINS); do m=$${d%%/cmd/*}; (cd $$m && GOWORK=off $(GO) mod tidy) || exit 1; done

fmt: ## format the Go code
	gofmt -w $$(git ls-files '*.go' | grep -v '^proto/gen/')

# Functions deadcode may report: runner.FinishedTurn and runner.StreamedTurn
# are the public ways for an agent other than the claude runner to build a
# Turn (turn.Agent returns one), runner.NewPermissionRequest the way to
# build a tool question for it; only tests and benchmarks use them inside
# this repository. markup.RenderVisibleFrom is the markup module's way for
# a plugin that renders markdown itself to take the host's rendering when
# there is one; the bundled plugins link no markdown parser and take it
# with channel.Rendered.Of. helper.MountEach is the sandbox helper's mounting
# as core/sandbox's one-sandbox prototype benchmark drives it.
DEADCODE_ALLOWED := core/sandbox/helper/start_linux.go:[0-9]+:[0-9]+: unreachable func: MountEach|markup/markup.go:[0-9]+:[0-9]+: unreachable func: RenderVisibleFrom|core/runner/turn.go:[0-9]+:[0-9]+: unreachable func: FinishedTurn|core/runner/turn.go:[0-9]+:[0-9]+: unreachable func: StreamedTurn|core/runner/permission.go:[0-9]+:[0-9]+: unreachable func: NewPermissionRequest

check: ## fmt, vet, proto in sync, go mod tidy, dependency rules, function and file size limits, generated docs current, docs name real commands and files, the sdk's API recorded (sdk/api.txt), no dead code
	@bad=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^proto/gen/')); [ -z "$$bad" ] || { echo "gofmt needed: $$bad"; exit 1; }
	@for m in $(MODULES); do echo "(cd $$m && $(GO) vet ./...)"; (cd $$m && $(GO) vet ./...) || exit 1; done
	@for m in $(MODULES); do echo "(cd $$m && GOOS=darwin GOARCH=arm64 $(GO) build ./...)"; (cd $$m && GOOS=darwin GOARCH=arm64 $(GO) build ./...) || { echo "$$m does not build for macOS"; exit 1; }; done
	$(MAKE) proto
	@git diff --exit-code -- proto/gen || { echo "proto/gen is out of date: run make proto and commit"; exit 1; }
	$(GO) run ./core/cmd/modproxy -tidy -diff
	@(cd tools && GOWORK=off $(GO) mod tidy -diff) || { echo "tools/go.mod or go.sum is not tidy: run make tidy"; exit 1; }
	@(cd tools/dendrite && GOWORK=off $(GO) mod tidy -diff) || { echo "tools/dendrite/go.mod or go.sum is not tidy: run make tidy"; exit 1; }
	@for d in $(SEPARATE_PLUGINS); do m=$${d%%/cmd/*}; echo "(cd $$m && GOWORK=off $(GO) vet ./... && mod tidy -diff && darwin build)"; \
	  (cd $$m && GOWORK=off $(GO) vet -tags goolm ./... && GOWORK=off $(GO) mod tidy -diff && GOWORK=off GOOS=darwin GOARCH=arm64 $(GO) build -tags goolm ./...) || { echo "$$m: vet, tidy (cd $$m && GOWORK=off go mod tidy) or the macOS build failed"; exit 1; }; done
	$(GO) test -count=1 -run 'TestDependencyRules|TestSDKModule|TestArchitectureDoc|TestSizeLimits|TestParameterLimits|TestPackageBounds|TestWaitsHaveABudget|TestTestsWriteProgramsWithWriteExecutable|TestChannelPluginsLinkNoMarkdownParser|TestNothingLinksTheFilterCompiler' ./core/archtest/
	$(GO) test -count=1 -tags seccompasm -run 'TestFilterIsCompiledAhead' ./core/internal/confine/
	GOOS=linux GOARCH=arm64 $(GO) vet ./core/internal/confine/ ./core/sandbox/...
	$(GO) test -count=1 -run 'TestConfigurationReference' ./core/config/
	$(GO) test -count=1 -run 'TestDocs' ./core/cli/
	cd sdk && $(GO) test -count=1 -run 'TestAPIIsRecorded' .
	@dead=$$($(BIN)/tools/deadcode -filter '^github.com/clawhost/clawhost(/|$$)' ./core/cmd/clawhost $(addprefix ./,$(PLUGIN_CMDS)) ./examples/... | grep -Ev '$(DEADCODE_ALLOWED)'); \
	  [ -z "$$dead" ] || { echo "unreachable code (delete it, or say why it stays in DEADCODE_ALLOWED):"; echo "$$dead"; exit 1; }

clean: ## remove build output
	rm -rf $(BIN) dist
