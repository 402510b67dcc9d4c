package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/clawhost/clawhost/core/internal/installpath"
)

// Default values of the top-level settings.
const (
	DefaultDataDir   = "./data"
	DefaultLogLevel  = "info"
	DefaultLogFormat = "text"
)

// Config is a decoded configuration file. Load and Parse return it with every
// default applied and every relative path made relative to the directory of
// the file (absolute when the file was given by Load).
type Config struct {
	// DataDir holds the database and the plugins' private directories
	// (data_dir), made 0700 with 0600 files (a data_dir of 0711, for
	// run_as, is kept). Default "./data"; a relative path is resolved
	// against the directory of the config file.
	DataDir string `hcl:"data_dir,optional"`

	// PluginDir is where plugin binaries are looked for (plugin_dir): the
	// default path of plugin "x" { source = "y" } is <plugin_dir>/clawhost-y.
	// Default: the directory of the running clawhost executable (symlinks
	// resolved), so a release archive's plugins and make build's bin/ are
	// found next to it; a relative path is resolved against the directory
	// of the config file.
	PluginDir string `hcl:"plugin_dir,optional"`

	// LogLevel is the lowest level logged (log_level): trace, debug, info,
	// warn or error. Default "info".
	LogLevel string `hcl:"log_level,optional"`

	// LogFormat is the log line format (log_format): "text" for people,
	// "json" for machines. Default "text".
	LogFormat string `hcl:"log_format,optional"`

	// Agent configures the Claude Code CLI runs (agent {}). Never nil after
	// Load; an absent block means all defaults.
	Agent *Agent `hcl:"agent,block"`

	// Agents are the agent "<id>" blocks in file order, each with what it
	// does not set inherited from Agent.
	Agents []*Agent

	// Access decides who may talk to the agent (access {}). Never nil after
	// Load; an absent block means all defaults.
	Access *Access `hcl:"access,block"`

	// Admin configures the local admin HTTP endpoint (admin {}). Never nil
	// after Load; an absent block means all defaults.
	Admin *Admin `hcl:"admin,block"`

	// Session decides which conversations share a claude session and when
	// one starts afresh (session {}). Never nil after Load; an absent block
	// means all defaults.
	Session *Session `hcl:"session,block"`

	// Queue decides what happens to messages that arrive while a turn runs
	// (queue {}). Never nil after Load; an absent block means all defaults.
	Queue *Queue `hcl:"queue,block"`

	// Messages shapes prompts and replies: prefix, chunking, group history,
	// envelope time zone, streaming, hooks (messages {}). Never nil after
	// Load; an absent block means all defaults.
	Messages *Messages `hcl:"messages,block"`

	// Plugins are the plugin "<instance>" blocks in file order, disabled ones
	// included.
	Plugins []*Plugin `hcl:"plugin,block"`

	// Schedules are the schedule "<name>" blocks: turns clawhost starts by
	// itself at set times.
	Schedules []*Schedule `hcl:"schedule,block"`

	// Storage chooses the storage engine (storage {}). Never nil after
	// Load; an absent block means SQLite in data_dir.
	Storage *Storage `hcl:"storage,block"`

	// Heartbeat is the heartbeat {} block, nil when absent.
	Heartbeat *Heartbeat `hcl:"heartbeat,block"`

	// Budget caps what turns cost per sender, chat and agent (budget {}).
	// Never nil after Load; an absent block means no budget.
	Budget *Budget `hcl:"budget,block"`

	// Audit says how long the audit trail keeps its rows (audit {}).
	// Never nil after Load.
	Audit *Audit `hcl:"audit,block"`

	path  string
	dir   string
	files map[string]*hcl.File
	body  hcl.Body
	ctx   *hcl.EvalContext
	// lookupEnv reads the environment the file is evaluated in (env(),
	// PGSSLMODE).
	lookupEnv lookupEnvFunc
	// idRefs are the channel ids written in the file, direct the
	// instances whose plugin declared DirectToSender (ids.go).
	idRefs []idRef
	direct map[string]bool
}

// Default returns the configuration of an empty file whose relative paths
// are not yet resolved.
func Default() *Config {
	return &Config{
		DataDir:   DefaultDataDir,
		LogLevel:  DefaultLogLevel,
		LogFormat: DefaultLogFormat,
		Agent:     defaultAgent(),
		Access:    defaultAccess(),
		Admin:     defaultAdmin(),
		Session:   defaultSession(),
		Queue:     defaultQueue(),
		Messages:  defaultMessages(),
		Storage:   defaultStorage(),
		Budget:    &Budget{},
		Audit:     defaultAudit(),
	}
}

// Load reads and decodes the configuration file at path. Relative paths in
// the file are resolved against the absolute directory of path.
//
// A file larger than MaxFileSize or nesting deeper than MaxNesting is
// refused with one diagnostic at the place it goes over, before it is
// parsed.
//
// The returned Config is nil only when the file cannot be read. When diags
// has errors the Config must not be used to run, except for Files (to print
// the diagnostics with FormatDiagnostics) and ProbePlugins (to check the
// plugins the errors leave alone).
func Load(path string) (*Config, hcl.Diagnostics) {
	src, err := readLimited(path)
	if err != nil {
		detail := fmt.Sprintf("Cannot read %s: %s.", path, err)
		if errors.Is(err, fs.ErrNotExist) {
			// A newcomer's first run: say how to make one.
			detail += " Run `clawhost init` to write one (it asks for your channels and tokens), or pass -config with the file's path."
		}
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Failed to read configuration file",
			Detail:   detail,
		}}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return parse(src, path, filepath.Dir(abs), os.LookupEnv)
}

// lookupEnvFunc is os.LookupEnv, replaced in tests.
type lookupEnvFunc func(string) (string, bool)

func parse(src []byte, filename, dir string, lookupEnv lookupEnvFunc) (*Config, hcl.Diagnostics) {
	cfg := Default()
	cfg.path = filename
	cfg.dir = dir
	cfg.ctx = evalContext(lookupEnv)
	cfg.lookupEnv = lookupEnv

	if diags := checkLimits(src, filename); diags.HasErrors() {
		// No source is kept: these diagnostics have no snippet, and
		// FormatDiagnostics must not read the file from disk again.
		cfg.files = map[string]*hcl.File{filename: {}}
		return cfg, diags
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	cfg.files = map[string]*hcl.File{filename: file}
	if file == nil || file.Body == nil || diags.HasErrors() {
		// A syntax error leaves a partial body; decoding it would report
		// follow-on problems that are not the user's.
		return cfg, diags
	}
	diags = append(diags, applyMoved(file.Body.(*hclsyntax.Body), movedSettings)...)
	body, named := splitAgents(file.Body.(*hclsyntax.Body))
	cfg.body = body

	// Plugin blocks are prefilled with their defaults: decodeBody decodes into
	// the existing elements and so keeps what the file does not set.
	pcontent, _, _ := body.PartialContent(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: "plugin", LabelNames: []string{"name"}}},
	})
	for _, b := range pcontent.Blocks {
		p := defaultPlugin()
		p.block = b
		cfg.Plugins = append(cfg.Plugins, p)
	}

	diags = append(diags, tidyDecodeDiagnostics(decodeBody(body, cfg.ctx, cfg), body)...)
	diags = append(diags, cfg.decodeAgents(named)...)
	for _, p := range cfg.Plugins {
		p.ctx = cfg.ctx
		if p.ConfigBlock == nil && p.block != nil {
			// decodeBody leaves it nil when the block is repeated (and says
			// so): decode the first one rather than report its
			// attributes missing.
			c, _, _ := p.block.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "config"}}})
			if c != nil && len(c.Blocks) > 0 {
				p.ConfigBlock = &ConfigBlock{Body: c.Blocks[0].Body, DefRange: c.Blocks[0].DefRange}
			}
		}
	}
	diags = append(diags, withoutFollowOns(cfg.check(), diags)...)
	hideEnvSources(diags, file.Body)
	cfg.resolvePaths()
	sortDiagnostics(diags)
	return cfg, diags
}

// withoutFollowOns drops the diagnostics of checks about a value the decoder
// already refused (idle_minutes = 1.5 is not a whole number; the check
// would then see 0).
func withoutFollowOns(checks, decoded hcl.Diagnostics) hcl.Diagnostics {
	refused := map[hcl.Range]bool{}
	for _, d := range decoded {
		if d.Severity == hcl.DiagError && d.Subject != nil {
			refused[*d.Subject] = true
		}
	}
	out := checks[:0:0]
	for _, d := range checks {
		if d.Subject == nil || !refused[*d.Subject] {
			out = append(out, d)
		}
	}
	return out
}

// Path is the file name the configuration was read from, as given to Load or
// Parse.
func (c *Config) Path() string { return c.path }

// Dir is the directory relative paths in the file were resolved against.
func (c *Config) Dir() string { return c.dir }

// Files maps file names to parsed files, for FormatDiagnostics. It includes
// the file even when it had syntax errors.
func (c *Config) Files() map[string]*hcl.File { return c.files }

// Plugin returns the plugin block with the given instance name, or nil.
func (c *Config) Plugin(instance string) *Plugin {
	for _, p := range c.Plugins {
		if p.Name == instance {
			return p
		}
	}
	return nil
}

// EnabledPlugins returns the plugin blocks with enabled = true, in file order.
func (c *Config) EnabledPlugins() []*Plugin {
	var out []*Plugin
	for _, p := range c.Plugins {
		if p.Enabled {
			out = append(out, p)
		}
	}
	return out
}

// check runs the rules types cannot express, over every block.
func (c *Config) check() hcl.Diagnostics {
	k := newChecker(c, c.body)
	k.enum("log_level", c.LogLevel, logLevels)
	k.enum("log_format", c.LogFormat, logFormats)
	c.Agent.check(k.block("agent"))
	checkAgents(k, c)
	c.Access.check(k.block("access"))
	c.Admin.check(k.block("admin"))
	c.Session.check(k.block("session"))
	c.Queue.check(k.block("queue"))
	c.Messages.check(k.block("messages"))
	c.Storage.check(k.block("storage"))
	c.Budget.check(k.block("budget"))
	c.Audit.check(k.block("audit"))
	checkPlugins(k, c.Plugins)
	checkSchedules(k, c)
	return *k.diags
}

var (
	logLevels  = []string{"trace", "debug", "info", "warn", "error"}
	logFormats = []string{"text", "json"}
)

// resolvePaths makes the file's relative paths relative to c.dir.
func (c *Config) resolvePaths() {
	c.DataDir = c.resolve(c.DataDir)
	c.Messages.PromptTemplate = c.resolve(c.Messages.PromptTemplate)
	if c.PluginDir == "" {
		c.PluginDir = installpath.ExecutableDir()
	}
	if c.PluginDir == "" {
		c.PluginDir = "./bin"
	}
	c.PluginDir = c.resolve(c.PluginDir)
	for _, a := range c.AllAgents() {
		c.resolveAgentPaths(a)
	}
	c.Admin.TLSCert = c.resolve(c.Admin.TLSCert)
	c.Admin.TLSKey = c.resolve(c.Admin.TLSKey)
	for _, p := range c.Plugins {
		if p.Path == "" {
			if p.Source != "" {
				p.Path = filepath.Join(c.PluginDir, BinaryPrefix+p.Source)
			}
		} else {
			p.Path = c.resolve(p.Path)
		}
	}
}

func (c *Config) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.dir, p)
}
