# clawhost — run `make help` for the targets.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN := bin
CLAUDE_VERSION := 2.1.330
CLAUDE_DIR := .cache/claude-cli
CLAUDE_BIN := $(CLAUDE_DIR)/node_modules/.bin/claude

# Plugin binaries: plugins/<name>/cmd/clawhost-<name> and examples/<name>.
PLUGIN_CMDS := $(wildcard plugins/*/cmd/clawhost-*)
EXAMPLES := $(wildcard examples/*)

# Go modules of the repository: the daemon (with the first-party plugins and
# examples), the sdk and the generated protocol. `go test ./...` does not
# enter a nested module, so the test, vet and tidy targets run each one.
MODULES := . sdk proto

.PHONY: help build run test test-go bench proto check fmt deps claude-cli browser clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/clawhost and every plugin and example as bin/clawhost-<name>
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/clawhost ./core/cmd/clawhost
	@for d in $(PLUGIN_CMDS); do echo "$(GO) build -o $(BIN)/$$(basename $$d) ./$$d"; $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/$$(basename $$d) ./$$d || exit 1; done
	@for d in $(EXAMPLES); do n=$$(basename $$d); echo "$(GO) build -o $(BIN)/clawhost-$$n ./$$d"; $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/clawhost-$$n ./$$d || exit 1; done

run: build ## run clawhost on the default config.hcl
	./$(BIN)/clawhost -config config.hcl

deps: claude-cli browser ## install what the tests need (claude CLI from npm, Chromium from Debian)

claude-cli: $(CLAUDE_BIN) ## install the real claude CLI into .cache/claude-cli (npm)
$(CLAUDE_BIN):
	@command -v npm >/dev/null || { echo "npm is needed for the claude CLI tests (apt-get install npm)"; exit 1; }
	npm install --prefix $(CLAUDE_DIR) --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code@$(CLAUDE_VERSION)
	@$(CLAUDE_BIN) --version

browser: ## install Debian's chromium for the browser tests (needs root or sudo)
	@command -v chromium >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }
	@chromium --version

test: build deps ## run all tests, with the real claude CLI and a headless Chromium
	@for m in $(MODULES); do echo "(cd $$m && $(GO) test ./...)"; \
	  (cd $$m && CLAWHOST_REQUIRE_CLAUDE=1 CLAWHOST_REQUIRE_BROWSER=1 CLAWHOST_CLAUDE_BIN=$(CURDIR)/$(CLAUDE_BIN) \
	  CLAWHOST_BIN_DIR=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 30m ./...) || exit 1; done

test-go: build ## run the tests that need only Go (real-CLI and browser tests skip)
	@for m in $(MODULES); do echo "(cd $$m && $(GO) test ./...)"; \
	  (cd $$m && CLAWHOST_BIN_DIR=$(CURDIR)/$(BIN) $(GO) test -count=1 ./...) || exit 1; done

bench: build claude-cli ## run the benchmarks (figures quoted in the issues)
	@for m in $(MODULES); do echo "(cd $$m && $(GO) test -bench . ./...)"; \
	  (cd $$m && CLAWHOST_CLAUDE_BIN=$(CURDIR)/$(CLAUDE_BIN) CLAWHOST_BIN_DIR=$(CURDIR)/$(BIN) \
	  $(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 30m ./...) || exit 1; done

# buf runs from the root so that `go tool protoc-gen-go` resolves in the
# root module (which pins the protoc plugins); the proto module itself
# requires only grpc and protobuf.
proto: ## regenerate proto/gen with the pinned buf and protoc plugins
	$(GO) tool -modfile=tools/go.mod buf generate proto --template proto/buf.gen.yaml

fmt: ## format the Go code
	gofmt -w $$(git ls-files '*.go' | grep -v '^proto/gen/')

# Functions deadcode may report: runner.FinishedTurn is the public way for
# an agent other than the claude runner to build a Turn (turn.Agent returns
# one); only tests and benchmarks use it inside this repository.
DEADCODE_ALLOWED := core/runner/turn.go:[0-9]+:[0-9]+: unreachable func: FinishedTurn

check: ## fmt, vet, proto in sync, go mod tidy, dependency rules, no dead code
	@bad=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^proto/gen/')); [ -z "$$bad" ] || { echo "gofmt needed: $$bad"; exit 1; }
	@for m in $(MODULES); do echo "(cd $$m && $(GO) vet ./...)"; (cd $$m && $(GO) vet ./...) || exit 1; done
	$(MAKE) proto
	@git diff --exit-code -- proto/gen || { echo "proto/gen is out of date: run make proto and commit"; exit 1; }
	@for m in $(MODULES) tools; do (cd $$m && $(GO) mod tidy -diff) || { echo "$$m/go.mod or go.sum is not tidy: run (cd $$m && go mod tidy)"; exit 1; }; done
	$(GO) test -count=1 -run 'TestDependencyRules|TestSDKModule' ./core/archtest/
	@dead=$$($(GO) tool -modfile=tools/go.mod deadcode -filter '^github.com/clawhost/clawhost(/|$$)' ./core/cmd/clawhost ./plugins/*/cmd/* ./examples/... | grep -Ev '$(DEADCODE_ALLOWED)'); \
	  [ -z "$$dead" ] || { echo "unreachable code (delete it, or say why it stays in DEADCODE_ALLOWED):"; echo "$$dead"; exit 1; }

clean: ## remove build output
	rm -rf $(BIN)
