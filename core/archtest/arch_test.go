package archtest

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/clawhost/clawhost"

type pkg struct {
	ImportPath string
	Imports    []string
}

// listPackages returns every package of the repository's modules (the
// daemon's, the sdk's and the protocol's: module+"/..." matches the packages
// of every module in the build list under that path) with their non-test
// imports.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	return goList[pkg](t, "ImportPath,Imports", module+"/...")
}

// goList runs go list -json=fields on pattern from the repository's root
// and decodes each package it prints into a T.
func goList[T any](t *testing.T, fields, pattern string) []T {
	t.Helper()
	cmd := exec.Command("go", "list", "-json="+fields, pattern)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []T
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p T
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// Layers of the core, from the top: the daemon's composition (core, its
// command line core/cli and core/cmd/..., and the parts it composes that
// reach across the pipeline: the agent's own tools core/agenttools and the
// hosts' membership core/cluster; the first setup core/setup, which writes
// what the daemon reads (the configuration, the owner claim); and the
// end-to-end harness core/e2e,
// which configures and runs the whole daemon)
// may import anything in core; the pipeline's composer
// (core/gateway) imports the stages and leaves but not the plugin host (it
// reaches plugins through its ports); a compound stage (compounds) imports
// stages and leaves; a stage imports leaves only; a leaf imports no other
// core package. Calls therefore never run back up.
const (
	layerLeaf = iota
	layerStage
	layerCompound
	layerPipeline
	layerDaemon
)

// compounds are stages made of stages: core/admission decides an arriving
// message with core/access, core/received and the command parser, and
// returns one verdict the composer acts on; core/replyroute takes a turn's
// reply out through core/sending, core/delivery and core/agentend.
var compounds = map[string]bool{
	"core/admission":  true,
	"core/replyroute": true,
}

// stages are the pipeline's stage packages.
var stages = map[string]bool{
	"core/access":   true,
	"core/approval": true,
	"core/command":  true,
	"core/queue":    true,
	"core/turn":     true,
	"core/delivery": true,
	// core/budget holds a turn to the budgets at its start, from the
	// usage ledger and the configuration's budget blocks.
	"core/budget": true,
	// The lifecycle hooks: core/received between access and the queue,
	// core/sending between a reply and the outbox, core/agentend after
	// the reply is recorded.
	"core/received": true,
	"core/sending":  true,
	"core/agentend": true,
	// core/agents routes a chat to its agent (bindings, /agent switches)
	// and to that agent's worktree of the chat.
	"core/agents": true,
}

// parts are the pieces the daemon's composition (the root package core)
// is made of, each a package of its own so that the root holds the
// daemon's lifecycle only: they stand at the daemon's layer (they may
// import the gateway, the stages, the leaves and the plugin host) but
// never import the root, its command line or its mains (no arrow back
// up), and the root imports them.
var parts = map[string]bool{
	"core/settings":     true,
	"core/configaudit":  true,
	"core/sandboxreach": true,
	"core/pluginprobe":  true,
	"core/doctor":       true,
	"core/pairing":      true,
	"core/schedules":    true,
	"core/reports":      true,
	// core/attach puts an owner's chat through to a terminal claude
	// (`clawhost channel`): in front of the runner, with its endpoint on
	// the admin server.
	"core/attach": true,
	// core/health is the agent and store items of the host's health (the
	// status page's), and the store wrapper and observer that feed them.
	"core/health": true,
}

func layer(p string) int {
	switch {
	case parts[p]:
		return layerDaemon
	case harnesses[p] && parts[path.Dir(p)]:
		// A harness of a daemon part (core/pluginprobe/pluginprobetest)
		// stands where the part does: it speaks the part's and the
		// configuration's types.
		return layerDaemon
	case p == "core" || p == "core/cli" || p == "core/agenttools" || p == "core/cluster" || p == "core/setup" || under(p, "core/cmd") || p == "core/e2e":
		return layerDaemon
	case p == "core/gateway":
		return layerPipeline
	case compounds[p]:
		return layerCompound
	case stages[p]:
		return layerStage
	}
	return layerLeaf
}

// contracts are core packages whose sub-packages (engines, conformance
// suites) may import them: a contract and its implementations are one
// concept, not two leaves.
var contracts = map[string]bool{
	"core/store": true,
}

// shared are a contract's parts its engines share: a sub-package of the
// contract that its other sub-packages may import. core/store/tables is the
// row layer both store engines run (the queries and the mapping of a table,
// written once).
var shared = map[string]string{
	"core/store/tables": "core/store",
}

// views are leaves over a contract: the leaf may import that contract (and
// no other core package). core/session is the typed view of the session
// row's metadata (core/store's Session.Chat); the stages that read and
// write session state import it.
// core/usagelimit keeps the usage-limit pause in the store (a lease) and
// parks and unparks through the journal.
// core/usage sums the usage ledger's rows into reports.
var views = map[string]string{
	"core/session":    "core/store",
	"core/usagelimit": "core/store",
	"core/usage":      "core/store",
	// core/config/configtest loads a test's configuration (a harness).
	"core/config/configtest": "core/config",
	// core/store/sqlite/sqlitetest opens the SQLite store for a test (a harness).
	"core/store/sqlite/sqlitetest": "core/store/sqlite",
}

// mechanisms are leaves another leaf drives: the key may import the value, which imports
// no other core package but core/internal's. core/sandbox is the runner's sandbox (the
// launchers that start claude, the mount policy, the recycled sandboxes' helper): the
// runner keeps sessions, processes and the warm pool, and starts each claude through it.
// core/sandbox/helper is what runs inside a recycled sandbox (its init, each claude's
// start, and the wire to it); core/sandbox's pool starts it and speaks to it.
var mechanisms = map[string]string{
	"core/runner":  "core/sandbox",
	"core/sandbox": "core/sandbox/helper",
}

// harnesses are test support packages: they may import "testing", and
// production code must not import them.
var harnesses = map[string]bool{
	"sdk/sdktest":                        true,
	"core/store/storetest":               true,
	"core/store/storetest/migrationtest": true,
	"core/store/postgres/pgtest":         true,
	"core/store/sqlite/sqlitetest":       true,
	"core/config/configtest":             true,
	// What a test configuration's plugins declare, for the audits' tests.
	"core/pluginprobe/pluginprobetest": true,
	// Only tests import them; they live in core/internal to stay private.
	"core/internal/testbin":           true,
	"core/internal/tstime/tstimetest": true,
	"core/internal/vectors":           true,
	"core/internal/golden":            true,
	"core/internal/asnobody":          true,
	"core/internal/qrcode/qrcodetest": true,
	// The end-to-end harness writes a whole host's configuration and runs
	// the binary: it stands where the daemon's composition does.
	"core/e2e": true,
}

// TestDependencyRules enforces the rules of docs/architecture.md:
//   - sdk/... never imports core/, plugins/, examples/, markup/;
//   - markup/ imports only the sdk's public packages;
//   - plugins/ and examples/ import only sdk/... and markup/ of this module
//     (no core, no generated proto types);
//   - only markup/ imports goldmark (one markdown walker);
//   - core/ never imports plugins/ or examples/; inside core, imports go
//     down the layers (see layer): daemon → pipeline composer → stages →
//     leaves, no stage imports another and no leaf imports another;
//   - a contract's sub-packages may import the contract (core/store/sqlite
//     and core/store/storetest import core/store), and so may a view of it
//     (views: core/session imports core/store); a leaf may import its
//     mechanism (mechanisms: core/runner imports core/sandbox);
//   - production code never imports "testing" and never imports a test
//     harness; the harnesses (sdk/sdktest, core/store/storetest) are the
//     exception to the first rule.
func TestDependencyRules(t *testing.T) {
	pkgs := listPackages(t)
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[rel(p.ImportPath)] = true
	}
	// The rules are only as good as the walk: each module's packages must be
	// in it (the sdk and proto modules are nested, and a pattern that missed
	// them would check nothing there).
	for _, want := range []string{"core/gateway", "sdk", "sdk/sdktest", "sdk/internal/wire", "proto/gen/clawhost/v1", "plugins/telegram", "examples/loopback", "markup"} {
		if !seen[want] {
			t.Errorf("go list did not find package %s: the dependency rules would not see it", want)
		}
	}
	for _, p := range pkgs {
		from := rel(p.ImportPath)
		for _, imp := range p.Imports {
			if imp == "testing" && !harnesses[from] {
				t.Errorf("%s imports testing: production code must not", from)
			}
			if strings.HasPrefix(imp, "github.com/yuin/goldmark") && !under(from, "markup") {
				t.Errorf("%s imports %s: markdown is parsed and rendered in markup only", from, imp)
			}
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if msg := violation(from, rel(imp)); msg != "" {
				t.Errorf("%s imports %s: %s", from, rel(imp), msg)
			}
		}
	}
}

// daemonModules are dependencies of the daemon that a plugin author must not
// download: the sdk module's build list must not contain them.
var daemonModules = []string{
	"github.com/hashicorp/hcl",
	"github.com/zclconf/go-cty",
	"modernc.org/sqlite",
	"github.com/jackc/pgx",
	"github.com/prometheus/",
	"github.com/chromedp/",
	"github.com/go-telegram-bot-api/",
	"github.com/bwmarrin/discordgo",
	"github.com/slack-go/slack",
	"go.mau.fi/",
	"github.com/yuin/goldmark",
	"github.com/microcosm-cc/bluemonday",
	"github.com/coder/websocket",
	"github.com/clawhost/clawhost ",
}

// TestSDKModuleIsLean checks that the sdk is a module of its own whose
// dependencies are the plugin protocol's (go-plugin, gRPC, protobuf), not the
// daemon's. It lists the sdk's build list as an author's module would see
// it: without go.work (whose build list is the union of the repository's
// modules), the protocol module read from its directory (its required
// version is not published before a release).
func TestSDKModuleIsLean(t *testing.T) {
	scratch := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile("../../sdk/" + f)
		if err != nil {
			t.Fatal(err)
		}
		proto, err := filepath.Abs("../../proto")
		if err != nil {
			t.Fatal(err)
		}
		if f == "go.mod" {
			data = append(data, "\nreplace "+module+"/proto => "+proto+"\n"...)
		}
		if err := os.WriteFile(filepath.Join(scratch, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "list", "-m", "-modfile="+filepath.Join(scratch, "go.mod"), "all")
	cmd.Dir = "../../sdk"
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m all in sdk: %v", err)
	}
	mods := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(mods) == 0 || mods[0] != module+"/sdk" {
		t.Fatalf("sdk/go.mod is not the module %s/sdk: first line %q", module, mods[0])
	}
	for _, m := range mods {
		for _, bad := range daemonModules {
			if strings.HasPrefix(m+" ", bad) {
				t.Errorf("the sdk module depends on %s, a daemon dependency", m)
			}
		}
	}
}

// platformLibraries are the chat platforms' client libraries: they belong
// in the plugins' binaries, never in the host's.
var platformLibraries = []string{
	"go.mau.fi/whatsmeow",
	"go.mau.fi/libsignal",
	"github.com/bwmarrin/discordgo",
	"github.com/go-telegram-bot-api/",
	"github.com/slack-go/slack",
}

// TestHostBinaryHasNoPlatformLibrary checks that no platform library is
// linked into bin/clawhost (a plugin package imported by accident would
// pull in whatsmeow and its SQLite store).
func TestHostBinaryHasNoPlatformLibrary(t *testing.T) {
	deps := goFields(t, "list", "-deps", "./core/cmd/clawhost")
	if len(deps) < 10 {
		t.Fatalf("go list -deps found only %q", deps)
	}
	for _, d := range deps {
		if hasPlatformLibrary(d) {
			t.Errorf("the host binary links %s, a platform library", d)
		}
	}
	if !hasPlatformLibrary("go.mau.fi/whatsmeow/store/sqlstore") || hasPlatformLibrary("github.com/clawhost/clawhost/core") {
		t.Error("hasPlatformLibrary cannot tell")
	}
}

// renderedByHost are the bundled channel plugins that send markdown as
// the host rendered it (channel.SendRequest.Rendered) and link no
// markdown parser: goldmark's package initialisers alone kept 0.3 MB of
// tables in every one of them, idle (docs/performance.md). The web chat
// renders history pages itself and keeps it.
var renderedByHost = []string{"./plugins/telegram/cmd/clawhost-telegram", "./plugins/discord/cmd/clawhost-discord",
	"./plugins/slack/cmd/clawhost-slack", "./plugins/whatsapp/cmd/clawhost-whatsapp"}

// linksMarkdownParser reports whether a package is the markdown parser or
// the module that wraps it.
func linksMarkdownParser(dep string) bool {
	return strings.HasPrefix(dep, "github.com/yuin/goldmark") || dep == "github.com/clawhost/clawhost/markup"
}

// TestChannelPluginsLinkNoMarkdownParser checks renderedByHost's binaries
// for the markdown parser, and that the check finds it where it is (the
// web chat).
func TestChannelPluginsLinkNoMarkdownParser(t *testing.T) {
	for _, m := range append(renderedByHost, "./plugins/webchat/cmd/clawhost-webchat") {
		deps := goFields(t, "list", "-tags", "grpcnotrace", "-deps", m)
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s found only %q", m, deps)
		}
		found := slices.ContainsFunc(deps, linksMarkdownParser)
		if web := strings.HasSuffix(m, "webchat"); found != web {
			t.Errorf("%s links the markdown parser: %v, want %v", m, found, web)
		}
	}
}

// TestWebChatLinksNoHTMLSanitiser: the web chat writes a message's HTML
// again itself (plugins/webchat/sanitize.go). bluemonday, its CSS parser
// and x/net/html's entity tables, which it used before, allocated 1.1 MB
// in their initialisers, held by every idle web chat.
func TestWebChatLinksNoHTMLSanitiser(t *testing.T) {
	deps := goFields(t, "list", "-tags", "grpcnotrace", "-deps", "./plugins/webchat/cmd/clawhost-webchat")
	if len(deps) < 10 {
		t.Fatalf("go list -deps found only %q", deps)
	}
	for _, d := range deps {
		for _, p := range []string{"github.com/microcosm-cc/bluemonday", "github.com/gorilla/css", "golang.org/x/net/html"} {
			if d == p || strings.HasPrefix(d, p+"/") {
				t.Errorf("the web chat links %s", d)
			}
		}
	}
}

// TestNothingLinksTheFilterCompiler: on amd64 the syscall filter is compiled ahead
// (core/internal/confine/filter_linux_amd64.go), so neither clawhost nor the sandbox
// helper links go-seccomp-bpf, whose syscall tables' initialiser took 0.3 ms and
// 165 KB in every process, a start of claude in a recycled sandbox among them.
func TestNothingLinksTheFilterCompiler(t *testing.T) {
	for _, m := range []string{"./core/cmd/clawhost", "./core/cmd/clawhost-sandbox"} {
		cmd := exec.Command("go", "list", "-tags", "grpcnotrace", "-deps", m)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", m, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s found only %q", m, deps)
		}
		for _, d := range deps {
			if strings.HasPrefix(d, "github.com/elastic/go-seccomp-bpf") {
				t.Errorf("%s links %s", m, d)
			}
		}
	}
}

// reflectionBloat are packages a plugin binary must not link: each makes
// the linker keep every exported method of every type a binary converts to
// an interface (net/rpc registers methods by reflection, text/template calls
// them by name, and gRPC's golang.org/x/net/trace renders templates), which
// made a plugin 40 % larger (Makefile, BUILD). go-plugin's server is the
// one that brought net/rpc; the sdk serves its protocol itself.
var reflectionBloat = []string{"net/rpc", "text/template", "golang.org/x/net/trace", "github.com/hashicorp/go-plugin"}

// TestPluginsKeepDeadCodeElimination checks every plugin and Go example, as
// the Makefile builds them, for the packages above, and links the ping
// example to check that no function the linker reaches reads methods by
// reflection (go build -ldflags=-dumpdep marks them <ReflectMethod>).
func TestPluginsKeepDeadCodeElimination(t *testing.T) {
	mains := goFields(t, "list", "-tags", "grpcnotrace", "-f", "{{if eq .Name \"main\"}}{{.ImportPath}}{{end}}", "./plugins/...", "./examples/...")
	if len(mains) < 5 {
		t.Fatalf("found only the plugin binaries %q", mains)
	}
	for _, m := range mains {
		for _, d := range goFields(t, "list", "-tags", "grpcnotrace", "-deps", m) {
			if slices.Contains(reflectionBloat, d) {
				t.Errorf("%s links %s", rel(m), d)
			}
		}
	}
	cmd := exec.Command("go", "build", "-tags", "grpcnotrace", "-ldflags=-dumpdep", "-o", os.DevNull, "./examples/ping")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	dump, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build -ldflags=-dumpdep ./examples/ping: %v\n%.2000s", err, dump)
	}
	if edges := strings.Count(string(dump), " -> "); edges < 1000 {
		t.Fatalf("the linker printed %d dependencies; -dumpdep did not work:\n%.2000s", edges, dump)
	}
	for _, line := range strings.Split(string(dump), "\n") {
		if strings.Contains(line, "<ReflectMethod>") {
			t.Errorf("examples/ping reaches a function that calls methods by reflection, so the linker keeps every exported method: %s", line)
			break
		}
	}
}

// goFields runs the go command in the repository's root and returns the
// fields of its output.
func goFields(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

func hasPlatformLibrary(pkg string) bool {
	for _, lib := range platformLibraries {
		if pkg == lib || strings.HasPrefix(pkg, strings.TrimSuffix(lib, "/")+"/") {
			return true
		}
	}
	return false
}

// violation returns which rule an import from → to breaks, or "".
func violation(from, to string) string {
	if harnesses[to] && !harnesses[from] {
		return "production code must not import a test harness"
	}
	switch {
	case under(from, "sdk"):
		if under(to, "core") || under(to, "plugins") || under(to, "examples") || under(to, "markup") {
			return "sdk must not import core, plugins, examples or markup"
		}
	case under(from, "markup"):
		if !under(to, "markup") && (!under(to, "sdk") || under(to, "sdk/internal")) {
			return "markup may import only the sdk's public packages"
		}
	case under(from, "plugins"), under(from, "examples"):
		if under(to, "sdk/internal") || under(to, "proto") {
			return "no generated or internal sdk types in plugins"
		}
		if !under(to, "sdk") && !under(to, "markup") && !sameTree(from, to) {
			return "plugins and examples may import only sdk/... and markup"
		}
	case under(from, "core"):
		if under(to, "plugins") || under(to, "examples") {
			return "core must not import plugins or examples"
		}
		if under(to, "core") && !(contracts[to] && under(from, to)) && !(shared[to] != "" && under(from, shared[to])) && views[from] != to && mechanisms[from] != to {
			return coreViolation(from, to)
		}
	}
	return ""
}

// coreViolation applies the layers to an import inside core.
// core/internal/... are small helpers of mechanism (no pipeline concept)
// that any core package may use; they import no other core package
// (a test harness among them, testbin, may use the others).
func coreViolation(from, to string) string {
	lf, lt := layer(from), layer(to)
	switch {
	case (parts[from] || harnesses[from] && parts[path.Dir(from)]) && (to == "core" || to == "core/cli" || under(to, "core/cmd") || to == "core/e2e"):
		return "the daemon's parts must not import the root, its command line or its mains: the root composes them"
	case lf == layerDaemon:
		return ""
	case under(to, "core/internal") && (!under(from, "core/internal") || harnesses[from]):
		// A harness stands above what it tests, not beside the helpers.
		return ""
	case to == "core/pluginhost":
		return "the pipeline reaches plugins through its ports; only the daemon (core) uses the plugin host"
	case lt >= lf && lf > layerLeaf:
		return "stages must not import each other or their composer; the composer (core/gateway) wires them"
	case lf == layerLeaf:
		return "leaf packages of core must not import each other; a stage or a composer wires them"
	}
	return ""
}

// sameTree reports whether two packages belong to the same plugin or
// example (plugins/telegram and plugins/telegram/cmd/clawhost-telegram).
func sameTree(a, b string) bool {
	pa, pb := strings.SplitN(a, "/", 3), strings.SplitN(b, "/", 3)
	return len(pa) >= 2 && len(pb) >= 2 && pa[0] == pb[0] && pa[1] == pb[1]
}

// TestRulesCatchViolations makes sure the rule checker can fail.
func TestRulesCatchViolations(t *testing.T) {
	cases := []struct{ from, to string }{
		{"sdk/channel", "core/config"},
		{"sdk/channel", "markup"},
		{"markup", "core/chunk"},
		{"markup", "sdk/internal/wire"},
		{"markup", "plugins/telegram"},
		{"plugins/telegram", "core/gateway"},
		{"examples/ping", "proto/gen/clawhost/v1"},
		{"core/chunk", "core/envelope"},
		{"core/queue", "core/turn"},
		{"core/turn", "core/gateway"},
		{"core/gateway", "core/pluginhost"},
		{"core/delivery", "core/pluginhost"},
		{"core/gateway", "core"},
		{"core/chunk", "core/message"},
		{"core/internal/envfilter", "core/store"},
		{"core/config", "plugins/telegram"},
		{"core/store", "core/store/sqlite"},
		{"core/store/sqlite", "core/config"},
		{"core/gateway", "core/store/storetest"},
		{"core/store/sqlite", "core/store/storetest"},
		{"plugins/telegram", "sdk/sdktest"},
		{"core/session", "core/config"},
		{"core/session", "core/queue"},
		{"core/chunk", "core/store"},
		{"core/config", "core/session"},
		{"core/admission", "core/gateway"},
		{"core/access", "core/admission"},
		{"core/admission", "core/pluginhost"},
		{"core/settings", "core"},
		{"core/settings", "core/cli"},
		// core/sandbox is the runner's mechanism, no one else's among the leaves,
		// and it drives nothing above it.
		{"core/sandbox", "core/runner"},
		{"core/config", "core/sandbox"},
		{"core/sandbox", "core/config"},
		// The helper runs inside the sandbox: it drives nothing of the host.
		{"core/sandbox/helper", "core/sandbox"},
		{"core/sandbox/helper", "core/runner"},
		{"core/runner", "core/sandbox/helper"},
		// A harness of a part is the part's own; a leaf's harness is a leaf.
		{"core/pluginprobe/pluginprobetest", "core"},
		{"core/config/configtest", "core/pluginprobe"},
		{"core/settings", "core/pluginprobe/pluginprobetest"},
	}
	for _, c := range cases {
		if violation(c.from, c.to) == "" {
			t.Errorf("%s → %s should violate the rules", c.from, c.to)
		}
	}
	if msg := violation("plugins/telegram/cmd/clawhost-telegram", "plugins/telegram"); msg != "" {
		t.Errorf("a plugin's main may import its own package: %s", msg)
	}
	for _, ok := range [][2]string{{"core/gateway", "core/queue"}, {"core/queue", "core/store"}, {"core", "core/pluginhost"}, {"core/cmd/clawhost", "core"}, {"core/cli", "core/pluginhost"}, {"core/runner", "core/internal/envfilter"}, {"core/session", "core/store"}, {"core/queue", "core/session"}, {"core/command", "core/session"}, {"core/gateway", "core/admission"}, {"core/admission", "core/access"}, {"core/admission", "core/store"}, {"core/runner", "core/sandbox"}, {"core/pluginprobe/pluginprobetest", "core/pluginprobe"}, {"core/pluginprobe/pluginprobetest", "core/config"}} {
		if msg := violation(ok[0], ok[1]); msg != "" {
			t.Errorf("%s → %s goes down the layers: %s", ok[0], ok[1], msg)
		}
	}
	for _, from := range []string{"core/store/sqlite", "core/store/storetest"} {
		if msg := violation(from, "core/store"); msg != "" {
			t.Errorf("%s may import its contract core/store: %s", from, msg)
		}
	}
}
