package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/cluster"

	"github.com/clawhost/clawhost/core/store/postgres"
	"github.com/clawhost/clawhost/core/store/sqlite"
)

// run is Main with an empty stdin.
func run(args []string, stdout, stderr io.Writer) int {
	return Main(args, strings.NewReader(""), stdout, stderr)
}

// TestVersion: clawhost version prints the version, commit, date and the
// store schema versions the engines migrate to.
func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"version"}, &out, io.Discard); code != 0 {
		t.Fatalf("version: exit %d %q", code, out.String())
	}
	want := fmt.Sprintf("store schema sqlite %d / postgres %d)\n", sqlite.SchemaVersion(), postgres.SchemaVersion())
	if !strings.HasPrefix(out.String(), "clawhost ") || !strings.HasSuffix(out.String(), want) || !strings.Contains(out.String(), " (commit ") {
		t.Fatalf("version: %q, want clawhost V (commit C, built D, %s", out.String(), want)
	}
}

// TestResolveBuild: a stamp (make build, make dist) wins; without one
// (go build, go install) the module version and VCS settings Go records
// fill in.
func TestResolveBuild(t *testing.T) {
	t.Parallel()
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "649f4591c2d8e0b7a3f1e2d4c5b6a7980123abcd"},
		{Key: "vcs.time", Value: "2026-11-25T06:10:40Z"},
		{Key: "vcs.modified", Value: "false"},
	}}
	dirty := &debug.BuildInfo{Main: debug.Module{Version: "v0.9.1"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abcdef0123"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, tc := range []struct {
		name                  string
		version, commit, date string
		info                  *debug.BuildInfo
		want                  string
	}{
		{"stamped", "0.9.0", "649f459", "2026-11-25T06:10:40Z", vcs,
			"clawhost 0.9.0 (commit 649f459, built 2026-11-25T06:10:40Z, store schema sqlite 12 / postgres 8)"},
		{"go build in a checkout", "dev", "", "", vcs,
			"clawhost dev (commit 649f459, built 2026-11-25T06:10:40Z, store schema sqlite 12 / postgres 8)"},
		{"go install at a version", "dev", "", "", dirty,
			"clawhost v0.9.1 (commit abcdef0-dirty, built unknown, store schema sqlite 12 / postgres 8)"},
		{"nothing known", "", "", "", nil,
			"clawhost dev (commit unknown, built unknown, store schema sqlite 12 / postgres 8)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := resolveBuild(tc.version, tc.commit, tc.date, tc.info)
			b.sqlite, b.postgres = 12, 8
			if got := b.String(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestHelp: -h, help and help COMMAND list every command with its line and
// the flags on stdout; an unknown command or help topic lists them on
// stderr and exits 2.
func TestHelp(t *testing.T) {
	t.Parallel()
	lines := []string{
		"  run [-config FILE] ", "  validate [-all] [-probe] [-config FILE] ", "  pairing list [-approved] [-config FILE] ",
		"  pairing approve CODE [-config FILE] ", "  pairing revoke INSTANCE:ID [-config FILE] ", "  version ", "  help [COMMAND] ", "  -config FILE ",
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stdout bool   // the list is on stdout, else stderr
		extra  string // also wanted
	}{
		{[]string{"-h"}, 0, true, ""},
		{[]string{"-help"}, 0, true, ""},
		{[]string{"help"}, 0, true, ""},
		{[]string{"help", "validate"}, 0, true, "sorted by file:line:col"},
		{[]string{"validate", "-h"}, 0, true, "clawhost validate [-all] [-probe] [-config FILE]\n"},
		{[]string{"help", "pairing"}, 0, true, "clawhost pairing approve CODE"},
		{[]string{"frobnicate"}, 2, false, `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, 2, false, `unknown command "frobnicate"`},
		{[]string{"validate", "-bogus"}, 2, false, "-bogus"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			code := run(tc.args, &out, &errb)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			list, other := out.String(), errb.String()
			if !tc.stdout {
				list, other = other, list
			}
			for _, l := range append(lines, tc.extra) {
				if !strings.Contains(list, l) {
					t.Errorf("lacks %q:\n%s", l, list)
				}
			}
			if other != "" {
				t.Errorf("other stream: %q", other)
			}
		})
	}
}

// TestHelpPluginTest: help lists `plugin test`; `help plugin` and
// `plugin test -h` explain its flags; a wrong use exits 2.
func TestHelpPluginTest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"help"}, 0, "  plugin test [flags] PATH "},
		{[]string{"help", "plugin"}, 0, "-inject CMD"},
		{[]string{"plugin", "test", "-h"}, 0, "-config-json JSON|@FILE"},
		{[]string{"plugin"}, 2, `want "clawhost plugin test PATH"`},
		{[]string{"plugin", "test"}, 2, "want one PATH"},
		{[]string{"plugin", "test", "-bogus", "x"}, 2, "-bogus"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			if code := run(tc.args, &out, &errb); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if got := out.String() + errb.String(); !strings.Contains(got, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, got)
			}
		})
	}
}

// TestCommandTable: every command help lists has exactly one way to run,
// and every first word finds its command.
func TestCommandTable(t *testing.T) {
	for _, c := range commands {
		if (c.run == nil) == (c.own == nil) {
			t.Errorf("command %q: want exactly one of run and own", c.name)
		}
		first, _, _ := strings.Cut(c.name, " ")
		if got, ok := lookup(first); !ok || got.name == "" {
			t.Errorf("lookup(%q) finds nothing", first)
		}
	}
	if _, ok := lookup("mcp-schedule"); ok {
		t.Error("mcp-schedule is listed; it is started by the host, not by people")
	}
}

// The agent's MCP bridge takes its token from the environment only: a
// -token flag is no way to give it one, and without the environment it
// refuses to start.
func TestMCPScheduleNeedsItsEnvironment(t *testing.T) {
	for _, k := range []string{"CLAWHOST_AGENT_SOCKET", "CLAWHOST_AGENT_TOKEN", "CLAWHOST_AGENT_CHAT"} {
		t.Setenv(k, "")
	}
	var out, errOut bytes.Buffer
	args := []string{"mcp-schedule", "-endpoint", "http://127.0.0.1:1/schedule", "-token", "t", "-chat", "tg:1"}
	if code := Main(args, strings.NewReader(""), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "CLAWHOST_AGENT_TOKEN") {
		t.Errorf("exit %d, %q; want 2 naming the environment", code, errOut.String())
	}
}

// A host whose cluster lease was lost exits 75 (EX_TEMPFAIL: the service
// manager restarts it); any other failure 1.
func TestExitCode(t *testing.T) {
	if got := exitCode(fmt.Errorf("run: %w", cluster.ErrLeaseLost)); got != 75 {
		t.Errorf("lease lost: %d", got)
	}
	if got := exitCode(errors.New("journal recovery: disk full")); got != 1 {
		t.Errorf("other: %d", got)
	}
}
