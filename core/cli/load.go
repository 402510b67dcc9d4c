// Finding and loading the configuration a command works on, and the host it names.

package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/setup"
	"github.com/hashicorp/hcl/v2"
)

// defaultConfig is the configuration file of a command without -config:
// the user's (clawhost init writes it), else ./config.hcl.
func defaultConfig() string { return setup.ConfigPath(os.Getenv) }

// loadEnv sets the variables of the clawhost.env beside the configuration
// file that the environment does not set (setup.LoadEnvFile); it prints
// why and returns false when the file is unsafe or broken.
func loadEnv(path string, w io.Writer) bool {
	if _, err := setup.LoadEnvFile(path, os.LookupEnv, os.Setenv); err != nil {
		fmt.Fprintf(w, "clawhost: %v\n", err)
		return false
	}
	return true
}

// loadAdmin is loadForHost for the commands that go through the admin
// endpoint: false, with the reason on w, when the host cannot be found or
// its admin endpoint is disabled (saying how to enable it and orElse,
// what else would do: ", or send the process SIGHUP").
func loadAdmin(name string, at hostAt, w io.Writer, orElse string) (*config.Config, bool) {
	cfg, ok := loadForHost(name, at, w)
	if ok && cfg.Admin.Listen == "" {
		fmt.Fprintf(w, "clawhost %s: the admin endpoint is disabled; enable it: admin { listen = %q }%s\n", name, config.DefaultAdminListen, orElse)
		return nil, false
	}
	return cfg, ok
}

// loadForHost is load for the commands that talk to the running host
// (status, pairing, reload): when the file on disk does not load — say,
// just after a reload was refused — the diagnostics are printed and the
// host is found from what it wrote in data_dir (admin.RuntimeFile; data_dir
// as far as the file says, else ./data beside it).
//
// With -admin ADDR (at.admin) the host is reached there whatever the file
// says; its token is still read from data_dir. The Config returned in the
// runtime case has no path (Config.Path is ""): it is good for reaching the
// host, not for opening its database (see pairing).
func loadForHost(name string, at hostAt, w io.Writer) (*config.Config, bool) {
	cfg, ok := load(at.config, w)
	if ok {
		if at.admin != "" {
			cfg.Admin.Listen = at.admin
		}
		return cfg, true
	}
	dirs := dataDirsOf(at.config, cfg)
	c := config.Default()
	c.DataDir = dirs[0]
	if at.admin != "" {
		fmt.Fprintf(w, "clawhost %s: %s does not load (above); reaching the running host at %s (-admin)\n", name, at.config, at.admin)
		c.Admin.Listen = at.admin
		return c, true
	}
	var rt admin.Runtime
	var err error
	for _, d := range dirs {
		if rt, err = admin.ReadRuntime(d); err == nil && rt.Listen != "" {
			c.DataDir = d
			break
		}
	}
	if err != nil || rt.Listen == "" {
		return nil, false
	}
	dataDir := c.DataDir
	fmt.Fprintf(w, "clawhost %s: %s does not load (above); reaching the running host at %s (from %s)\n", name, at.config, rt.Listen, filepath.Join(dataDir, admin.RuntimeFile))
	c.Admin.Listen, c.Admin.TLSCert = rt.Listen, rt.TLSCert
	return c, true
}

// dataDirRE finds a top-level data_dir in a file that does not parse.
var dataDirRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*data_dir\s*=\s*"([^"]+)"`) })

// dataDirsOf are the places data_dir may be for the configuration file path, which did
// not load (cfg is what was decoded of it, maybe nil), most likely first: what was decoded,
// a data_dir line in the file as text, ./data beside it, and the data_dir clawhost init
// writes when the file is init's (in the user's configuration directory).
func dataDirsOf(path string, cfg *config.Config) []string {
	var out []string
	add := func(d string) {
		if d == "" {
			return
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(filepath.Dir(path), d)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if cfg != nil {
		add(cfg.DataDir)
	}
	if b, err := os.ReadFile(path); err == nil {
		if m := dataDirRE().FindSubmatch(b); m != nil {
			add(string(m[1]))
		}
	}
	add(config.DefaultDataDir)
	if abs, err := filepath.Abs(path); err == nil && filepath.Dir(abs) == setup.ConfigDir(os.Getenv) {
		add(setup.DataDir(os.Getenv))
	}
	return out
}

// hostAt says where the commands that talk to the running host find it:
// the configuration file and -admin.
type hostAt struct{ config, admin string }

// host is where inv's command finds the running host.
func (inv invocation) host() hostAt { return hostAt{config: inv.config, admin: inv.admin} }

// load reads the configuration, printing diagnostics; ok is false on errors.
func load(path string, w io.Writer) (*config.Config, bool) {
	cfg, _, ok := loadProblems(path, w)
	return cfg, ok
}

// loadProblems is load that also returns why the file does not load, one
// line per error ("file:line:col: summary: detail"), for a command that
// reports it as JSON.
func loadProblems(path string, w io.Writer) (*config.Config, []string, bool) {
	if _, err := setup.LoadEnvFile(path, os.LookupEnv, os.Setenv); err != nil {
		fmt.Fprintf(w, "clawhost: %v\n", err)
		return nil, []string{err.Error()}, false
	}
	cfg, diags := config.Load(path)
	if len(diags) > 0 {
		var files map[string]*hcl.File
		if cfg != nil {
			files = cfg.Files()
		}
		config.FormatDiagnostics(w, diags, files)
	}
	var problems []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		line := d.Summary
		if d.Detail != "" {
			line += ": " + d.Detail
		}
		if d.Subject != nil {
			line = fmt.Sprintf("%s:%d:%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, line)
		}
		problems = append(problems, line)
	}
	return cfg, problems, cfg != nil && !diags.HasErrors()
}
