package config

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/core/internal/queuemode"
)

// BinaryPrefix starts the file name of every plugin binary: the default path
// of plugin "x" { source = "y" } is <plugin_dir>/clawhost-y.
const BinaryPrefix = "clawhost-"

// DefaultStartTimeout is the default plugin start_timeout.
const DefaultStartTimeout = Duration("10s")

// DefaultToolTimeout is the default plugin tool_timeout.
const DefaultToolTimeout = Duration("30s")

var (
	instanceRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_-]+$`) })
	sha256Re   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{64}$`) })
	envNameRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// Plugin is one plugin "<instance>" {} block. The label is the instance
// name; several instances may share a source (two Telegram bots, say).
type Plugin struct {
	// Name is the instance name, the block's label: lower-case letters,
	// digits, "_" and "-". It prefixes senders in access entries
	// ("tg:1001") and names the plugin in logs. Unique in the file.
	Name string `hcl:"name,label"`

	// Source names the plugin (source, required): its binary is
	// <plugin_dir>/clawhost-<source> unless Path is set.
	Source string `hcl:"source"`

	// Enabled starts the plugin (enabled). Default true. It may be an
	// expression, e.g. env("TELEGRAM_BOT_TOKEN", "") != "".
	Enabled bool `hcl:"enabled,optional"`

	// Path is the plugin binary (path). Default <plugin_dir>/clawhost-<source>;
	// a relative path is resolved against the directory of the config file.
	// Load always fills it in.
	Path string `hcl:"path,optional"`

	// SHA256 is the expected hex SHA-256 of the binary (sha256, optional);
	// when set, the host refuses to start a binary with another checksum.
	// Load lower-cases it.
	SHA256 string `hcl:"sha256,optional"`

	// StartTimeout bounds the plugin's start: launch, handshake, schema and
	// Configure (start_timeout). Default "10s".
	StartTimeout Duration `hcl:"start_timeout,optional"`

	// Env is extra environment for the plugin process (env), e.g.
	// { HTTPS_PROXY = env("HTTPS_PROXY", "") }. A plugin does not inherit the
	// host's environment: it gets PATH, HOME, TMPDIR, USER, LOGNAME, LANG,
	// LC_* and TZ from it, GOMAXPROCS=1 (a Go plugin runs on one processor,
	// which keeps its idle memory small; set GOMAXPROCS here for more),
	// these variables (which may replace those), and the host's own
	// handshake variables (which nothing replaces). Names are
	// letters, digits and "_", not starting with a digit. The values may be
	// secrets: they are part of the fingerprint (a change restarts the
	// plugin) but never shown in diagnostics or logs. A plugin's own secrets
	// (tokens) belong in its config block, as the sensitive attributes its
	// schema declares.
	Env map[string]string `hcl:"env,optional"`

	// RunAs is a user the plugin process runs as (run_as), when clawhost
	// runs as root: a name or a uid. The plugin's data directory
	// (<data_dir>/plugins/<instance>) is made that user's; data_dir itself
	// must let it enter (chmod o+x). Its HOME, USER and LOGNAME are that
	// user's. Empty: the plugin runs as clawhost's user.
	RunAs string `hcl:"run_as,optional"`

	// UntrustedInput marks the plugin as handling what chats wrote
	// (untrusted_input): a hook that parses attachments, a tool that reads
	// what claude hands it. When true the host starts its process inside
	// bubblewrap: it sees the system's programs and libraries, its own
	// binary, its data directory (<data_dir>/plugins/<instance>, the only
	// place it can write besides a /tmp of its own), the agents' media
	// directories read-only (where a hook's attachments are), and nothing
	// else of the host: not data_dir, the config file's directory or any
	// home directory. It keeps the network. Where bubblewrap cannot run the
	// plugin is not started (state no_sandbox). Allowed on a channel plugin
	// too (its state lives in its data directory), but the files a reply
	// attaches from the agent's workspace are not there for it: those sends
	// fail. Default false.
	UntrustedInput bool `hcl:"untrusted_input,optional"`

	// ToolTimeout bounds each call of the plugin's agent tools
	// (tool_timeout): a call that takes longer is stopped and claude gets
	// the tool's error saying so. Default "30s". A host setting: changing
	// it does not restart the plugin.
	ToolTimeout Duration `hcl:"tool_timeout,optional"`

	// Debounce overrides queue.debounce for this instance's messages
	// (debounce): "0s" turns debouncing off. Empty (the default) inherits
	// queue.debounce. A host setting: changing it does not restart the
	// plugin.
	Debounce Duration `hcl:"debounce,optional"`

	// TextLimit overrides messages.text_limit for this instance's replies
	// (text_limit); the channel's own limit still caps it. At least 1 when
	// written; 0 (the default) inherits messages.text_limit. A host
	// setting: changing it does not restart the plugin.
	TextLimit int `hcl:"text_limit,optional"`

	// QueueMode overrides queue.mode for this instance's conversations
	// (queue_mode), with the same values. Empty (the default) inherits
	// queue.mode. A host setting: changing it does not restart the plugin.
	QueueMode string `hcl:"queue_mode,optional"`

	// OnError is what a failing hook of this instance does (on_error):
	// "skip" (the default) passes the message or reply on as the previous
	// hooks left it; "drop" drops a message_received hook's message and
	// tells the sender it could not be handled; "hold" fails closed: a
	// message_sending hook's reply waits until the hook answers again (the
	// chat is told it is held), and a message_received hook's message is
	// dropped as with "drop". A hook fails when it answers with an error,
	// does not answer within messages.hook_timeout, or is not running. A
	// host setting: changing it does not restart the plugin.
	OnError string `hcl:"on_error,optional"`

	// Reset replaces session.reset for this instance's conversations
	// (reset {}); session.reset_by_type still refines it. Nil when the block
	// is absent: session.reset applies. A host setting: changing it does not
	// restart the plugin.
	Reset *ResetRule `hcl:"reset,block"`

	// ConfigBlock is the plugin's own config {} block, kept undecoded: its
	// schema comes from the plugin at run time (see DecodePluginConfig). Nil
	// when the block is absent, which is the same as an empty block.
	ConfigBlock *ConfigBlock `hcl:"config,block"`

	// DefRange is the position of the block header, for diagnostics about
	// the instance (it failed to start, its binary is missing).
	DefRange hcl.Range `hcl:",def_range"`

	block *hcl.Block       // the plugin block itself, for attribute positions
	ctx   *hcl.EvalContext // the file's evaluation context (env())
}

// ConfigBlock is a plugin's raw config {} block.
type ConfigBlock struct {
	// Body is the block's content, decoded by DecodePluginConfig.
	Body hcl.Body `hcl:",remain"`
	// DefRange is the position of the "config" header.
	DefRange hcl.Range `hcl:",def_range"`
}

// HookOnError are the values a plugin's on_error accepts.
var HookOnError = []string{"skip", "drop", "hold"}

func defaultPlugin() *Plugin {
	return &Plugin{Enabled: true, StartTimeout: DefaultStartTimeout, ToolTimeout: DefaultToolTimeout}
}

// Range returns the position of the value of the plugin block's attribute
// name ("source", "path", "sha256", ...), or the block header when the
// attribute is not written, for diagnostics the host reports about the
// instance.
func (p *Plugin) Range(name string) hcl.Range {
	if p.block != nil {
		k := &checker{body: p.block.Body}
		if r := k.valueRange(name); r != nil {
			return *r
		}
	}
	return p.DefRange
}

func checkPlugins(k *checker, plugins []*Plugin) {
	seen := map[string]*Plugin{}
	for _, p := range plugins {
		pk := k.sub(nil, fmt.Sprintf("plugin %q", p.Name))
		if p.block != nil {
			pk.body = p.block.Body
		}
		labelRange := p.DefRange
		if p.block != nil && len(p.block.LabelRanges) > 0 {
			labelRange = p.block.LabelRanges[0]
		}
		if !instanceRe().MatchString(p.Name) {
			k.errorf(&labelRange, "Invalid plugin instance name",
				"%q is not a valid instance name: use lower-case letters, digits, \"_\" and \"-\".", p.Name)
		}
		if first, dup := seen[p.Name]; dup {
			k.errorf(&labelRange, "Duplicate plugin instance",
				"Plugin %q is already defined at %s. Instance names must be unique; two instances of one source need two names.",
				p.Name, pos(first.DefRange))
		} else {
			seen[p.Name] = p
		}
		if pk.attr("source") != nil {
			if p.Source == "" || !instanceRe().MatchString(p.Source) {
				pk.errorf(pk.valueRange("source"), "Invalid value for "+pk.qualified("source"),
					"%q is not a plugin source name: use lower-case letters, digits, \"_\" and \"-\"; the binary is %s<source>.", p.Source, BinaryPrefix)
			}
		}
		if p.SHA256 != "" {
			if !sha256Re().MatchString(p.SHA256) {
				pk.errorf(pk.valueRange("sha256"), "Invalid value for "+pk.qualified("sha256"),
					"The SHA-256 of the plugin binary is 64 hexadecimal digits (as printed by sha256sum); this value has %d characters%s.",
					len(p.SHA256), nonHexNote(p.SHA256))
			}
			p.SHA256 = strings.ToLower(p.SHA256)
		}
		pk.duration("start_timeout", p.StartTimeout)
		pk.duration("tool_timeout", p.ToolTimeout)
		pk.envNames("env", p.Env)
		pk.runAs("run_as", p.RunAs)
		pk.optionalDuration("debounce", p.Debounce)
		if pk.attr("text_limit") != nil && p.TextLimit < 1 {
			pk.errorf(pk.valueRange("text_limit"), "Invalid value for "+pk.qualified("text_limit"),
				"The value must be at least 1, not %d; remove the attribute to use messages.text_limit.", p.TextLimit)
		}
		if p.QueueMode != "" {
			pk.enum("queue_mode", p.QueueMode, queuemode.Names())
		}
		if p.OnError != "" {
			pk.enum("on_error", p.OnError, HookOnError)
		}
		if p.Reset != nil {
			rk := pk.block("reset")
			rk.where = "the reset block of " + pk.where
			p.Reset.check(rk)
		}
	}
}

// envNames checks the names of the environment map attribute name. Its
// values are not looked at: they may be secrets (hideEnvSources keeps them
// out of every diagnostic).
func (k *checker) envNames(name string, env map[string]string) {
	names := make([]string, 0, len(env))
	for n := range env {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !envNameRe().MatchString(n) {
			k.errorf(k.valueRange(name), "Invalid environment variable name in "+k.qualified(name),
				"%q is not an environment variable name: use letters, digits and \"_\", not starting with a digit.", n)
		}
	}
}

// EnvSlice returns env as "NAME=value" strings sorted by name, as
// exec.Cmd.Env takes them.
func EnvSlice(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for n, v := range env {
		out = append(out, n+"="+v)
	}
	sort.Strings(out)
	return out
}

func nonHexNote(s string) string {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return " and non-hexadecimal characters"
		}
	}
	return ""
}

// SourceDiagnostic explains that the binary of plugin p is missing.
// available are the sources found in plugin_dir (file names with or without
// the "clawhost-" prefix, e.g. from AvailableSources); the diagnostic
// suggests the nearest one ("did you mean") and lists them. It is nil when p
// is nil.
func (c *Config) SourceDiagnostic(p *Plugin, available []string) *hcl.Diagnostic {
	if p == nil {
		return nil
	}
	instance := p.Name
	names := make([]string, 0, len(available))
	for _, a := range available {
		names = append(names, strings.TrimPrefix(a, BinaryPrefix))
	}
	sort.Strings(names)
	names = slices.Compact(names)

	list := "There are no " + BinaryPrefix + "* binaries in " + c.PluginDir + "."
	if len(names) > 0 {
		list = fmt.Sprintf("Sources available in %s: %s.", c.PluginDir, strings.Join(names, ", "))
	}
	if p.block != nil && (&checker{body: p.block.Body}).attr("path") != nil {
		r := p.Range("path")
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Plugin binary not found",
			Detail:   fmt.Sprintf("Plugin %q: %s does not exist or is not executable.", instance, p.Path),
			Subject:  &r,
		}
	}
	r := p.Range("source")
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Plugin binary not found",
		Detail: fmt.Sprintf("Plugin %q has source %q, but %s does not exist or is not executable.%s %s",
			instance, p.Source, p.Path, didYouMean(p.Source, names), list),
		Subject: &r,
	}
}

// AvailableSources lists the sources whose binaries (clawhost-<source>
// executables) are in dir, sorted. A missing dir gives none.
func AvailableSources(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list plugin sources: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, BinaryPrefix) || len(name) == len(BinaryPrefix) {
			continue
		}
		info, err := e.Info()
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			continue
		}
		out = append(out, strings.TrimPrefix(name, BinaryPrefix))
	}
	sort.Strings(out)
	return out, nil
}

// launchAttributes are the attributes of a plugin block that say what to
// start: an error in one of them leaves nothing to probe.
var launchAttributes = []string{"source", "path", "sha256", "enabled", "start_timeout"}

// ProbePlugins returns the enabled plugins that `clawhost validate` can
// still start and ask for their schema although diags (from Load) may have
// errors: those with a source and a path, whose label and whose source,
// path, sha256, enabled and start_timeout attributes have no error — and,
// for a plugin without a path, plugin_dir has none. An error elsewhere, even
// in the same block (a bad queue_mode, a misspelt attribute), does not keep
// a plugin from being probed; its config block is checked too. The time is
// linear in the plugins and diagnostics (error positions are sorted once).
// After a syntax error there are no plugins.
func (c *Config) ProbePlugins(diags hcl.Diagnostics) []*Plugin {
	errAt := map[string][]int{} // file name: sorted error offsets
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Subject != nil {
			errAt[d.Subject.Filename] = append(errAt[d.Subject.Filename], d.Subject.Start.Byte)
		}
	}
	for _, offs := range errAt {
		slices.Sort(offs)
	}
	// hit reports whether an error starts inside r.
	hit := func(r hcl.Range) bool {
		offs := errAt[r.Filename]
		i, _ := slices.BinarySearch(offs, r.Start.Byte)
		return i < len(offs) && offs[i] < max(r.End.Byte, r.Start.Byte+1)
	}
	dirBad := false
	if c.body != nil {
		if a := (&checker{body: c.body}).attr("plugin_dir"); a != nil {
			dirBad = hit(a.Range)
		}
	}
	var out []*Plugin
	for _, p := range c.EnabledPlugins() {
		if p.Source == "" || p.Path == "" || p.block == nil {
			continue
		}
		bad := false
		for _, r := range p.block.LabelRanges {
			bad = bad || hit(r)
		}
		k := &checker{body: p.block.Body}
		for _, name := range launchAttributes {
			if a := k.attr(name); a != nil {
				bad = bad || hit(a.Range)
			}
		}
		if k.attr("path") == nil {
			bad = bad || dirBad
		}
		if !bad {
			out = append(out, p)
		}
	}
	return out
}
