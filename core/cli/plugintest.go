package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core"
	"github.com/clawhost/clawhost/sdk/conformance"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/schema"
)

// pluginTestOptions are the flags of `clawhost plugin test`.
type pluginTestOptions struct {
	path    string
	config  string // JSON, or @FILE
	inject  string // shell command
	exec    string // "/cmd args" for a command plugin's Execute
	workdir string // the chat directory Execute is told
	timeout time.Duration
	grace   time.Duration
	verbose bool
}

// pluginCommand is `clawhost plugin SUBCOMMAND ...`: test, schema,
// descriptor, package, new.
func pluginCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "schema" {
		return pluginSchema(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "descriptor" {
		return pluginDescriptor(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "package" {
		return pluginPackage(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "new" {
		return pluginNew(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "test" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return help([]string{"plugin"}, stdout, stderr)
		}
		fmt.Fprintln(stderr, "clawhost plugin: want \"clawhost plugin test PATH\", \"clawhost plugin schema SOURCE|PATH\", \"clawhost plugin descriptor\" or \"clawhost plugin package DIR\"")
		fmt.Fprintln(stderr)
		writeUsage(stderr)
		return 2
	}
	fs := flag.NewFlagSet("clawhost plugin test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	var o pluginTestOptions
	fs.StringVar(&o.config, "config-json", "{}", "the plugin's config {} block as JSON, or @FILE (defaults filled in from its schema)")
	fs.StringVar(&o.inject, "inject", "", "shell command that makes the plugin's platform produce one inbound message (see help)")
	fs.StringVar(&o.exec, "exec", "", "a command line (\"/cmd args\") a command plugin's Execute runs; its answer is checked")
	fs.StringVar(&o.workdir, "workdir", "", "the chat's directory (absolute) the -exec command and the tool calls are told, as the host tells them a chat's workspace or worktree")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "bound of each step")
	fs.DurationVar(&o.grace, "grace", 5*time.Second, "how long a plugin may take to exit after SIGTERM")
	fs.BoolVar(&o.verbose, "v", false, "show the plugin's log and go-plugin's")
	// Flags may come before and after PATH.
	rest := args[1:]
	var positional []string
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return help([]string{"plugin test"}, stdout, stderr)
			}
			fmt.Fprintln(stderr)
			writeUsage(stderr)
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		positional, rest = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
	if len(positional) != 1 {
		fmt.Fprintln(stderr, "clawhost plugin test: want one PATH, the plugin binary")
		return 2
	}
	o.path = positional[0]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return pluginTest(ctx, o, stdout, stderr)
}

// pluginTest launches the plugin binary once to learn its kinds and
// schema, then runs conformance.For its description, each check on fresh
// processes, printing one line per check. Exit 0 when every check passed
// (skips allowed), 1 when one failed, 2 when the plugin could not be
// tested at all.
func pluginTest(ctx context.Context, o pluginTestOptions, stdout, stderr io.Writer) int {
	path, err := filepath.Abs(o.path)
	if err == nil {
		_, err = os.Stat(path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "clawhost plugin test: %v\n", err)
		return 2
	}
	userJSON := []byte(o.config)
	if name, ok := strings.CutPrefix(o.config, "@"); ok {
		if userJSON, err = os.ReadFile(name); err != nil {
			fmt.Fprintf(stderr, "clawhost plugin test: -config-json: %v\n", err)
			return 2
		}
	}
	level := hclog.Warn
	if o.verbose {
		level = hclog.Debug
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "plugin", Output: stderr, Level: level, TimeFormat: core.LogTimeFormat})
	tmp, err := os.MkdirTemp("", "clawhost-plugin-test-")
	if err != nil {
		fmt.Fprintf(stderr, "clawhost plugin test: %v\n", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	tl := &testLauncher{path: path, tmp: tmp, o: o, log: log, stderr: stderr}

	// First launch: who is it, and what does its config look like?
	pctx, cancel := context.WithTimeout(ctx, 2*o.timeout)
	inst, err := tl.start(pctx)
	if err != nil {
		cancel()
		fmt.Fprintf(stdout, "FAIL  handshake\n%s", checkDetail(err.Error()))
		return 1
	}
	d, derr := inst.Plugin.Describe(pctx)
	sch, serr := inst.Plugin.ConfigSchema(pctx)
	stopErr := tl.stop(inst)
	cancel()
	if err := errors.Join(derr, serr); err != nil {
		fmt.Fprintf(stdout, "FAIL  describe\n%s", checkDetail(err.Error()))
		return 1
	}
	cfg, err := withDefaults(userJSON, sch)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost plugin test: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "plugin %s %s (%s), sdk %q: %s\n", d.Name, d.Version, kindList(d), d.SDKVersion, o.path)
	if stopErr != nil {
		fmt.Fprintf(stdout, "note: the first launch did not stop cleanly: %v\n", stopErr)
	}

	tg := conformance.Target{
		Start:   tl.start,
		Stop:    tl.stop,
		Config:  cfg,
		Exec:    o.exec,
		Workdir: o.workdir,
		Timeout: o.timeout,
	}
	if o.inject != "" {
		tg.Inject = tl.injectMessage
	}
	var passed, failed, skipped int
	for _, c := range conformance.For(d) {
		if ctx.Err() != nil {
			break
		}
		start := time.Now()
		note, err := c.Run(ctx, tg)
		took := time.Since(start).Round(time.Millisecond)
		switch {
		case errors.Is(err, conformance.ErrSkipped):
			skipped++
			fmt.Fprintf(stdout, "SKIP  %-22s %v\n", c.Name, err)
		case err != nil:
			failed++
			fmt.Fprintf(stdout, "FAIL  %-22s (%s)\n%s", c.Name, took, checkDetail(err.Error()))
		default:
			passed++
			fmt.Fprintf(stdout, "PASS  %-22s (%s) %s\n", c.Name, took, note)
		}
	}
	tl.wait()
	fmt.Fprintf(stdout, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if failed > 0 || ctx.Err() != nil {
		return 1
	}
	return 0
}

// testLauncher starts and stops plugin processes for the checks, each with
// its own data dir, and runs the inject command.
type testLauncher struct {
	path   string
	tmp    string
	o      pluginTestOptions
	log    hclog.Logger
	stderr io.Writer

	mu      sync.Mutex
	n       int
	procs   map[string]*testProc // by data dir
	injects sync.WaitGroup
}

func (tl *testLauncher) start(ctx context.Context) (conformance.Instance, error) {
	tl.mu.Lock()
	tl.n++
	dir := filepath.Join(tl.tmp, fmt.Sprintf("data-%d", tl.n))
	tl.mu.Unlock()
	if err := os.Mkdir(dir, 0o700); err != nil {
		return conformance.Instance{}, err
	}
	p, plug, err := launchTestPlugin(tl.path, dir, tl.o.timeout, tl.log)
	if err != nil {
		return conformance.Instance{}, err
	}
	tl.mu.Lock()
	if tl.procs == nil {
		tl.procs = map[string]*testProc{}
	}
	tl.procs[dir] = p
	tl.mu.Unlock()
	return conformance.Instance{Plugin: plug, DataDir: dir}, nil
}

func (tl *testLauncher) stop(inst conformance.Instance) error {
	tl.mu.Lock()
	p := tl.procs[inst.DataDir]
	delete(tl.procs, inst.DataDir)
	tl.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.stop(tl.o.grace)
}

// injectMessage runs the -inject command in the background (it may wait
// for the host's ack, which comes later or never) until the check ends.
func (tl *testLauncher) injectMessage(ctx context.Context, inst conformance.Instance, text string) (string, error) {
	js, _ := json.Marshal(text)
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", tl.o.inject)
	cmd.Env = append(os.Environ(), "CLAWHOST_TEST_TEXT="+text, "CLAWHOST_TEST_TEXT_JSON="+string(js), "CLAWHOST_TEST_DATA_DIR="+inst.DataDir)
	cmd.Dir = inst.DataDir
	cmd.Stdout, cmd.Stderr = io.Discard, tl.stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	tl.injects.Add(1)
	go func() {
		defer tl.injects.Done()
		_ = cmd.Wait()
	}()
	return "", nil
}

// wait waits for the inject commands (ended with their checks).
func (tl *testLauncher) wait() { tl.injects.Wait() }

// withDefaults returns the user's config JSON with the schema's defaults
// filled in for absent attributes, as the host decodes a config {} block.
// A required attribute that is absent is an error.
func withDefaults(user []byte, sch schema.Schema) ([]byte, error) {
	obj := map[string]json.RawMessage{}
	if err := json.Unmarshal(user, &obj); err != nil {
		return nil, fmt.Errorf("-config-json is not a JSON object: %w", err)
	}
	var missing []string
	for _, a := range sch {
		if _, ok := obj[a.Name]; ok {
			continue
		}
		if raw, ok := a.Default.(json.RawMessage); ok && len(raw) > 0 {
			obj[a.Name] = raw
		} else if a.Required {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the plugin requires %s: pass them in -config-json", strings.Join(missing, ", "))
	}
	return json.Marshal(obj)
}

// kindList names the kinds a description offers.
func kindList(d pluginclient.Description) string {
	ks := d.Kinds()
	if len(ks) == 0 {
		return "no kind"
	}
	return strings.Join(ks, ", ")
}

// checkDetail indents every line of s under a check's line.
func checkDetail(s string) string {
	const pad = "      "
	return pad + indent(strings.TrimRight(s, "\n"), pad) + "\n"
}
