package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/configaudit"
	"github.com/clawhost/clawhost/core/pluginprobe"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/securityaudit"
	"github.com/clawhost/clawhost/core/settings"
)

// securityCommand is `clawhost security audit [-config FILE] [-json]`: the
// risky settings of the file and the machine (core/securityaudit). Exit 0
// when nothing is high or critical, 1 otherwise, 2 on bad usage or a file
// that does not load.
func securityCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "audit" {
		fmt.Fprintln(stderr, "usage: clawhost security audit [-config FILE] [-json]")
		return 2
	}
	fs := flag.NewFlagSet("clawhost security audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	cfgPath := fs.String("config", defaultConfig(), configFlagUsage)
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	const usage = "usage: clawhost security audit [-config FILE] [-json]"
	if code, ok := parseFlags(fs, args[1:], usage, stdout, stderr, "security", "audit"); !ok {
		return code
	}
	if extraArg(fs, usage, stderr) {
		return 2
	}
	if !loadEnv(*cfgPath, stderr) {
		return 2
	}
	cfg, diags := config.Load(*cfgPath)
	if cfg == nil || diags.HasErrors() {
		var files map[string]*hcl.File
		if cfg != nil {
			files = cfg.Files()
		}
		config.FormatDiagnostics(stderr, diags, files)
		fmt.Fprintln(stderr, "clawhost security audit: the configuration does not load; fix it first (clawhost validate)")
		return 2
	}
	m := securityaudit.System()
	if rc, err := settings.Runner(cfg); err == nil {
		facts := runner.ProbeBoundary(rc)
		m.Boundary = &facts
	}
	findings := configaudit.Run(cfg, m, pluginprobe.Declarations(cfg, cfg.Plugins, nil))
	write := securityaudit.WriteText
	if *asJSON {
		write = securityaudit.WriteJSON
	}
	if err := write(stdout, *cfgPath, findings, m.Verdict()); err != nil {
		fmt.Fprintf(stderr, "clawhost security audit: %v\n", err)
		return 2
	}
	return securityaudit.ExitCode(findings)
}
