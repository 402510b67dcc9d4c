package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/doctor"
)

const doctorUsage = "usage: clawhost doctor [-config FILE] [-json]"

// doctorCommand is `clawhost doctor`: what the configuration needs of this
// machine, each with a verdict and what to do. Exit 0 when nothing fails
// (warnings allowed), 1 when a check fails or the file does not load, 2 on
// bad usage.
func doctorCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clawhost doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	cfgPath := fs.String("config", defaultConfig(), configFlagUsage)
	asJSON := fs.Bool("json", false, "print the checks as JSON")
	if code, ok := parseFlags(fs, args, doctorUsage, stdout, stderr, "doctor"); !ok {
		return code
	}
	if extraArg(fs, doctorUsage, stderr) {
		return 2
	}
	cfg, problems, ok := loadProblems(*cfgPath, stderr)
	if !ok {
		fmt.Fprintln(stderr, "clawhost doctor: the configuration does not load; fix it first (clawhost validate)")
		if *asJSON {
			// The file's errors as a failing check, so a machine reading
			// stdout learns why like any other failure.
			if len(problems) == 0 {
				problems = []string{"the configuration does not load"}
			}
			writeChecks(stdout, stderr, []doctor.Check{{Name: "configuration", Verdict: doctor.VerdictFail,
				Found: strings.Join(problems, "\n"), Do: "fix the file: clawhost validate -config " + *cfgPath}})
		}
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	checks := doctor.Run(ctx, cfg)
	failed := 0
	for _, c := range checks {
		if c.Verdict == doctor.VerdictFail {
			failed++
		}
	}
	if *asJSON {
		if !writeChecks(stdout, stderr, checks) {
			return 1
		}
	} else {
		marks := map[string]string{doctor.VerdictOK: "ok  ", doctor.VerdictWarn: "WARN", doctor.VerdictFail: "FAIL", doctor.VerdictSkip: "skip"}
		for _, c := range checks {
			fmt.Fprintf(stdout, "%s  %-28s %s\n", marks[c.Verdict], c.Name, c.Found)
			if c.Do != "" {
				fmt.Fprintf(stdout, "      %-28s to do: %s\n", "", c.Do)
			}
		}
		if failed == 0 {
			fmt.Fprintln(stdout, "\nNothing fails: clawhost can run here with this configuration.")
		} else {
			fmt.Fprintf(stdout, "\n%d check(s) fail: clawhost will not work as configured until they are fixed.\n", failed)
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// writeChecks prints checks as JSON; false when it could not.
func writeChecks(stdout, stderr io.Writer, checks []doctor.Check) bool {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(checks); err != nil {
		fmt.Fprintf(stderr, "clawhost doctor: %v\n", err)
		return false
	}
	return true
}
