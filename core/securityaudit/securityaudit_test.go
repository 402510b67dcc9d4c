package securityaudit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/boundary"
)

// safe is an input with nothing to report (data_dir aside, which each
// test sets).
func safe() Input {
	return Input{
		Access: Access{
			DMPolicy: Setting{"pairing", "c.hcl:3"}, Owners: []string{"tg:1"}, OwnersAt: "c.hcl:4",
			AllowFrom: []Setting{{"web:*", "c.hcl:5"}, {"tg:2", "c.hcl:5"}}, GroupPolicy: Setting{"allowlist", ""},
		},
		Agent: Agent{
			Approvals: Setting{"off", ""}, AskOffered: true, Approvers: Setting{"owners", ""},
			Settings: Setting{"project", ""}, Sandbox: Setting{"auto", ""},
			AllowedTools: []Setting{{"Read", "c.hcl:9"}, {"Bash(git log:*)", "c.hcl:9"}},
		},
		Admin: Admin{Listen: Setting{"127.0.0.1:8791", "c.hcl:12"}, Local: true},
		Plugins: []Plugin{
			{Name: "web", Source: "webchat", At: "c.hcl:20", Enabled: true, Pinned: true, Local: true, Token: true, Listen: Setting{"127.0.0.1:8790", "c.hcl:22"}},
			{Name: "tg", Source: "telegram", At: "c.hcl:30", Enabled: true, Pinned: true, WebhookSecret: Setting{"0123456789abcdef", "c.hcl:33"}},
			{Name: "off", Source: "discord", At: "c.hcl:40", Enabled: false},
		},
		Storage: Storage{Engine: "sqlite"},
	}
}

// holds is a machine whose boundary holds: bubblewrap makes claude's user
// namespace, the filter loads, Landlock ABI 7 is in use.
var holds = boundary.Facts{Sandbox: "bubblewrap", Seccomp: true, LandlockABI: 7}

// machine has bubblewrap and runs as uid 1000.
func machine() Machine {
	return Machine{LookPath: func(string) (string, error) { return "/usr/bin/bwrap", nil }, UID: 1000}
}

func ids(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Severity.String()+" "+f.Check+" "+f.Where)
	}
	return out
}

// TestChecks: each check, by a change to a safe configuration, finds
// exactly what it should; near misses find nothing.
func TestChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*Input, *Machine)
		want   []string
	}{
		{"safe", func(*Input, *Machine) {}, nil},
		{"open dms", func(in *Input, _ *Machine) { in.Access.DMPolicy = Setting{"open", "c.hcl:3"} },
			[]string{"critical access.dm_policy_open c.hcl:3"}},
		{"allowlist dms", func(in *Input, _ *Machine) { in.Access.DMPolicy = Setting{"allowlist", "c.hcl:3"} }, nil},
		{"no owners", func(in *Input, _ *Machine) { in.Access.Owners = nil },
			[]string{"medium access.no_owners c.hcl:4"}},
		{"wildcard on a remote channel", func(in *Input, _ *Machine) {
			in.Access.AllowFrom = append(in.Access.AllowFrom, Setting{"tg:*", "c.hcl:6"})
		}, []string{"critical access.allow_from_wildcard c.hcl:6"}},
		{"wildcard on an unknown instance", func(in *Input, _ *Machine) {
			in.Access.AllowFrom = []Setting{{"x:*", "c.hcl:6"}}
		}, []string{"critical access.allow_from_wildcard c.hcl:6"}},
		{"wildcard on the local web chat without a token", func(in *Input, _ *Machine) { in.Plugins[0].Token = false },
			[]string{"low access.allow_from_wildcard_local c.hcl:5"}},
		{"wildcard on the web chat beyond loopback", func(in *Input, _ *Machine) {
			in.Plugins[0].Local = false
			in.Plugins[0].Listen = Setting{"0.0.0.0:8790", "c.hcl:22"}
		}, []string{"critical access.allow_from_wildcard c.hcl:5", "high plugin.listen_public c.hcl:22"}},
		{"open groups", func(in *Input, _ *Machine) { in.Access.GroupPolicy = Setting{"open", "c.hcl:7"} },
			[]string{"high access.group_policy_open c.hcl:7"}},
		{"groups with nobody named", func(in *Input, _ *Machine) {
			in.Access.Groups, in.Access.GroupsAt, in.Access.Owners = []string{"tg:-100"}, "c.hcl:8", nil
		}, []string{"medium access.group_triggers c.hcl:8", "medium access.no_owners c.hcl:4"}},
		{"groups with group_allow_from", func(in *Input, _ *Machine) {
			in.Access.Groups, in.Access.Owners, in.Access.GroupAllowFrom = []string{"tg:-100"}, nil, []string{"tg:2"}
		}, []string{"medium access.no_owners c.hcl:4"}},
		{"groups with a rule's allow_from", func(in *Input, _ *Machine) {
			in.Access.Groups, in.Access.Owners, in.Access.Members, in.Access.GroupRulesWithAllowFrom = []string{"tg:-100"}, nil, []string{"tg:3"}, 1
		}, []string{"medium access.no_owners c.hcl:4"}},
		{"groups disabled", func(in *Input, _ *Machine) {
			in.Access.Groups, in.Access.GroupPolicy, in.Access.Owners = []string{"tg:-100"}, Setting{"disabled", ""}, []string{"tg:1"}
			in.Agent.Approvers = Setting{"sender", "c.hcl:10"}
		}, nil},
		{"sender approves in groups", func(in *Input, _ *Machine) {
			in.Access.Groups, in.Access.GroupsAt = []string{"tg:-100"}, "c.hcl:8"
			in.Agent.Approvers = Setting{"sender", "c.hcl:10"}
		}, []string{"high agent.approvers_sender_in_groups c.hcl:10"}},
		{"sender approves, no way to ask", func(in *Input, _ *Machine) {
			in.Access.Groups = []string{"tg:-100"}
			in.Agent.Approvers, in.Agent.AskOffered = Setting{"sender", "c.hcl:10"}, false
		}, nil},
		{"sender approves in dms only", func(in *Input, _ *Machine) { in.Agent.Approvers = Setting{"sender", "c.hcl:10"} }, nil},
		{"personal settings", func(in *Input, _ *Machine) { in.Agent.Settings = Setting{"user", "c.hcl:11"} },
			[]string{"high agent.settings_user c.hcl:11"}},
		{"sandbox off", func(in *Input, _ *Machine) { in.Agent.Sandbox = Setting{"off", "c.hcl:12"} },
			[]string{"medium agent.sandbox_off c.hcl:12"}},
		{"no bubblewrap", func(_ *Input, m *Machine) {
			m.LookPath = func(string) (string, error) { return "", errors.New("not found") }
		}, []string{"medium agent.sandbox_unavailable "}},
		{"bypass", func(in *Input, _ *Machine) {
			in.Agent.PermissionMode = Setting{"bypassPermissions", "c.hcl:13"}
			in.Agent.PermissionModes = []Setting{{"plan", "c.hcl:14"}, {"bypassPermissions", "c.hcl:14"}}
			in.Agent.Args = []Setting{{"--dangerously-skip-permissions", "c.hcl:15"}}
		}, []string{"critical agent.bypass_permissions c.hcl:13", "critical agent.bypass_permissions c.hcl:14", "critical agent.bypass_permissions c.hcl:15"}},
		{"wide tools", func(in *Input, _ *Machine) {
			in.Agent.AllowedTools = []Setting{{"Bash", "c.hcl:9"}, {"Bash( * )", "c.hcl:9"}, {"Bash(git:*)", "c.hcl:9"}}
		}, []string{"high agent.allowed_tools_runs_code c.hcl:9", "high agent.allowed_tools_wide c.hcl:9", "high agent.allowed_tools_wide c.hcl:9"}},
		{"admin beyond loopback", func(in *Input, _ *Machine) { in.Admin.Listen, in.Admin.Local = Setting{":8791", "c.hcl:12"}, false },
			[]string{"critical admin.listen_public c.hcl:12"}},
		{"admin beyond loopback with tls", func(in *Input, _ *Machine) {
			in.Admin.Listen, in.Admin.TLS, in.Admin.Local = Setting{"10.0.0.1:8791", "c.hcl:12"}, true, false
		}, []string{"medium admin.listen_public c.hcl:12"}},
		{"admin on localhost, or off", func(in *Input, _ *Machine) {
			in.Admin.Listen = Setting{"localhost:8791", "c.hcl:12"}
			in.Plugins[0].Listen = Setting{"[::1]:8790", "c.hcl:22"}
		}, nil},
		{"unpinned", func(in *Input, _ *Machine) { in.Plugins[1].Pinned, in.Plugins[2].Pinned = false, false },
			[]string{"info plugin.unpinned c.hcl:30"}},
		{"short webhook secret", func(in *Input, _ *Machine) { in.Plugins[1].WebhookSecret = Setting{"s", "c.hcl:33"} },
			[]string{"medium telegram.webhook_secret_short c.hcl:33"}},
		{"short webhook secret, plugin disabled", func(in *Input, _ *Machine) {
			in.Plugins[1].WebhookSecret, in.Plugins[1].Enabled = Setting{"s", "c.hcl:33"}, false
		}, nil},
		{"postgres in clear", func(in *Input, _ *Machine) {
			in.Storage = Storage{Engine: "postgres", RemoteHost: "db", SSLMode: "", At: "c.hcl:50"}
		}, []string{"high storage.postgres_tls c.hcl:50"}},
		{"postgres unverified", func(in *Input, _ *Machine) {
			in.Storage = Storage{Engine: "postgres", RemoteHost: "db", SSLMode: "require", At: "c.hcl:50"}
		}, []string{"medium storage.postgres_tls c.hcl:50"}},
		{"postgres verify-ca", func(in *Input, _ *Machine) {
			in.Storage = Storage{Engine: "postgres", RemoteHost: "db", SSLMode: "verify-ca", At: "c.hcl:50"}
		}, []string{"low storage.postgres_tls c.hcl:50"}},
		{"postgres verified, or local", func(in *Input, _ *Machine) {
			in.Storage = Storage{Engine: "postgres", RemoteHost: "db", SSLMode: "verify-full", At: "c.hcl:50"}
		}, nil},
		{"postgres local", func(in *Input, _ *Machine) { in.Storage = Storage{Engine: "postgres", SSLMode: "disable"} }, nil},
		{"root without run_as", func(_ *Input, m *Machine) { m.UID = 0 },
			[]string{"high process.root_without_run_as "}},
		{"root with run_as", func(in *Input, m *Machine) { m.UID, in.Agent.RunAs = 0, Setting{"clawhost", "c.hcl:16"} }, nil},
		{"a named agent's own settings", func(in *Input, _ *Machine) {
			in.Agents = []Agent{{ID: "public", Settings: Setting{"user", "c.hcl:41"}, Sandbox: Setting{"off", "c.hcl:42"},
				AllowedTools: []Setting{{"Bash", "c.hcl:43"}}, PermissionMode: Setting{"bypassPermissions", "c.hcl:44"}}}
		}, []string{"critical agent.bypass_permissions c.hcl:44", "high agent.allowed_tools_wide c.hcl:43", "high agent.settings_user c.hcl:41", "medium agent.sandbox_off c.hcl:42"}},
		{"a named agent inherits", func(in *Input, _ *Machine) { in.Agents = []Agent{{ID: "ops"}} }, nil},
		{"root, a named agent without run_as", func(in *Input, m *Machine) {
			m.UID, in.Agent.RunAs = 0, Setting{"clawhost", "c.hcl:16"}
			in.Agents = []Agent{{ID: "ops", RunAs: Setting{"", "c.hcl:45"}}, {ID: "docs"}}
		}, []string{"high process.root_without_run_as c.hcl:45"}},
		// The machine's boundary (runner.ProbeBoundary's facts, injected).
		{"boundary holds", func(_ *Input, m *Machine) { m.Boundary = &holds }, nil},
		{"root, the boundary holds: only the plugins are root's", func(_ *Input, m *Machine) { m.UID, m.Boundary = 0, &holds },
			[]string{"medium process.root_without_run_as "}},
		{"root, a named agent without run_as, the boundary holds", func(in *Input, m *Machine) {
			m.UID, m.Boundary, in.Agent.RunAs = 0, &holds, Setting{"clawhost", "c.hcl:16"}
			in.Agents = []Agent{{ID: "ops", RunAs: Setting{"", "c.hcl:45"}}}
		}, nil},
		{"root, no syscall filter", func(_ *Input, m *Machine) {
			f := holds
			f.Seccomp = false
			m.UID, m.Boundary = 0, &f
		}, []string{"high process.root_without_run_as ", "high sandbox.seccomp "}},
		{"root, user namespaces off", func(_ *Input, m *Machine) {
			f := holds
			f.Sandbox, f.UsernsOff = "unavailable (bubblewrap failed: bwrap: No permissions to create new namespace)", "user.max_user_namespaces"
			m.UID, m.Boundary = 0, &f
		}, []string{"high process.root_without_run_as ", "medium sandbox.user_namespace "}},
		{"no bubblewrap: checkSandbox's alone", func(_ *Input, m *Machine) {
			f := holds
			f.Sandbox = "unavailable (bubblewrap not installed)"
			m.Boundary, m.LookPath = &f, func(string) (string, error) { return "", errors.New("not found") }
		}, []string{"medium agent.sandbox_unavailable "}},
		{"no landlock", func(_ *Input, m *Machine) {
			f := holds
			f.LandlockABI = 0
			m.Boundary = &f
		}, []string{"low sandbox.landlock "}},
		{"landlock, sandboxes made per start", func(_ *Input, m *Machine) {
			f := holds
			f.PerStart = "CLAWHOST_SANDBOX_HELPER=0"
			m.Boundary = &f
		}, []string{"low sandbox.landlock "}},
		{"sandbox off: agent.sandbox_off alone", func(in *Input, m *Machine) {
			f := holds
			f.Sandbox = "off"
			m.Boundary, in.Agent.Sandbox = &f, Setting{"off", "c.hcl:15"}
		}, []string{"medium agent.sandbox_off c.hcl:15"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, m := safe(), machine()
			in.DataDir = filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(in.DataDir, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.change(&in, &m)
			if got := ids(Run(in, m)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("findings:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestFiles: data_dir and the files in it open to other accounts, and a
// config file readable by others while it holds written-out secrets.
// TestAllowedToolsRunCode: an allowed_tools prefix rule of a program
// that runs code through its arguments, or of a subcommand tool without
// its subcommand, is reported with why and what to write instead; exact
// commands and prefixes through a subcommand are not.
func TestAllowedToolsRunCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule, check, found, fix string // check "": no finding
	}{
		{"Bash(git:*)", "agent.allowed_tools_runs_code", "core.sshCommand", `"Bash(git status:*)"`},
		{"Bash(git *)", "agent.allowed_tools_runs_code", "every git subcommand", `"Bash(git log:*)"`},
		{"Bash(git -C /srv:*)", "agent.allowed_tools_runs_code", "every git subcommand", "Bash(git status:*)"},
		{"Bash(*)", "agent.allowed_tools_wide", "every shell command", "Bash(git log:*)"},
		{"Bash", "agent.allowed_tools_wide", "every shell command", "Bash(git log:*)"},
		{"Bash(sh:*)", "agent.allowed_tools_runs_code", "sh -c", "without a wildcard"},
		{"Bash(bash:*)", "agent.allowed_tools_runs_code", "bash -c", "without a wildcard"},
		{"Bash(python:*)", "agent.allowed_tools_runs_code", "python -c", "without a wildcard"},
		{"Bash(python3:*)", "agent.allowed_tools_runs_code", "python3 -c", "without a wildcard"},
		{"Bash(node:*)", "agent.allowed_tools_runs_code", "node -e", "without a wildcard"},
		{"Bash(npx:*)", "agent.allowed_tools_runs_code", "any package", "without a wildcard"},
		{"Bash(npm:*)", "agent.allowed_tools_runs_code", "npm exec", `"Bash(npm test)"`},
		{"Bash(make:*)", "agent.allowed_tools_runs_code", "make build -f any.mk", `"Bash(make build)"`},
		{"Bash(make build:*)", "agent.allowed_tools_runs_code", "SHELL=", `"Bash(make test)"`},
		{"Bash(env:*)", "agent.allowed_tools_runs_code", "env sh -c", "without a wildcard"},
		{"Bash(xargs:*)", "agent.allowed_tools_runs_code", "xargs runs", "without a wildcard"},
		{"Bash(find:*)", "agent.allowed_tools_runs_code", "-exec", "without a wildcard"},
		{"Bash(awk:*)", "agent.allowed_tools_runs_code", "system(", "without a wildcard"},
		{"Bash(sed:*)", "agent.allowed_tools_runs_code", "e command", "without a wildcard"},
		{"Bash(perl:*)", "agent.allowed_tools_runs_code", "perl -e", "without a wildcard"},
		{"Bash(docker:*)", "agent.allowed_tools_runs_code", "docker run -v", "without a wildcard"},
		{"Bash(go:*)", "agent.allowed_tools_runs_code", "go run", `"Bash(go test:*)"`},
		{"Bash(go run:*)", "agent.allowed_tools_runs_code", "go run builds and runs any program", "Bash(go run <its arguments>)"},
		{"Bash(npm exec:*)", "agent.allowed_tools_runs_code", "any package", "Bash(npm exec <its arguments>)"},
		{"Bash(sudo:*)", "agent.allowed_tools_runs_code", "root", "without a wildcard"},
		{"Bash(git log:*)", "", "", ""},
		{"Bash(git -C /srv status:*)", "", "", ""},
		{"Bash(npm run build:*)", "", "", ""},
		{"Bash(npm test)", "", "", ""},
		{"Bash(python3 scripts/check.py)", "", "", ""},
		{"Bash(go test:*)", "", "", ""},
		{"Bash(ls:*)", "", "", ""},
		{"Read", "", "", ""},
		{"Edit(//srv/a.md)", "", "", ""},
	} {
		in := safe()
		in.Agent.AllowedTools = []Setting{{tc.rule, "c.hcl:9"}}
		fs := Run(in, machine())
		if tc.check == "" {
			if len(fs) != 0 {
				t.Errorf("%s: %v", tc.rule, ids(fs))
			}
			continue
		}
		if len(fs) != 1 || fs[0].Check != tc.check || fs[0].Severity != High || fs[0].Where != "c.hcl:9" {
			t.Errorf("%s: %v, want one high %s", tc.rule, ids(fs), tc.check)
			continue
		}
		if f := fs[0]; !strings.Contains(f.Found, tc.rule) || !strings.Contains(f.Found, tc.found) || !strings.Contains(f.Fix, tc.fix) {
			t.Errorf("%s:\n  found: %s\n  fix:   %s\nwant %q and %q", tc.rule, f.Found, f.Fix, tc.found, tc.fix)
		}
	}
}

func TestFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir, cfg string)
		secrets bool
		want    []string
	}{
		{"private", func(*testing.T, string, string) {}, true, nil},
		{"data_dir 0755", func(t *testing.T, dir, _ string) { chmod(t, dir, 0o755) }, false,
			[]string{"medium files.data_dir_mode $DATA"}},
		{"data_dir 0777", func(t *testing.T, dir, _ string) { chmod(t, dir, 0o777) }, false,
			[]string{"high files.data_dir_mode $DATA"}},
		{"files open", func(t *testing.T, dir, _ string) {
			write(t, filepath.Join(dir, "clawhost.db"), 0o644)
			write(t, filepath.Join(dir, "ok.db"), 0o600)
			write(t, filepath.Join(dir, "group.db"), 0o640)
			write(t, filepath.Join(dir, "plugins", "wa", "device.db"), 0o666)
			chmod(t, filepath.Join(dir, "plugins"), 0o755)
		}, false, []string{
			"high files.data_dir_file_mode $DATA/plugins/wa/device.db",
			"medium files.data_dir_file_mode $DATA/clawhost.db",
			"medium files.data_dir_file_mode $DATA/plugins",
			"low files.data_dir_file_mode $DATA/group.db",
		}},
		{"many files open", func(t *testing.T, dir, _ string) {
			for i := 0; i < maxFileFindings+3; i++ {
				write(t, filepath.Join(dir, "f"+string(rune('a'+i))), 0o644)
			}
		}, false, nil}, // counted below
		{"config world-readable with secrets", func(t *testing.T, _, cfg string) { chmod(t, cfg, 0o644) }, true,
			[]string{"high files.config_secrets_readable $CFG"}},
		{"config group-readable with secrets", func(t *testing.T, _, cfg string) { chmod(t, cfg, 0o640) }, true,
			[]string{"low files.config_secrets_readable $CFG"}},
		{"config world-readable without secrets", func(t *testing.T, _, cfg string) { chmod(t, cfg, 0o644) }, false, nil},
		{"no data_dir yet", func(t *testing.T, dir, _ string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
		}, false, []string{"info files.data_dir_missing $DATA"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			in, m := safe(), machine()
			in.DataDir = filepath.Join(root, "data")
			in.ConfigPath = filepath.Join(root, "config.hcl")
			if err := os.Mkdir(in.DataDir, 0o700); err != nil {
				t.Fatal(err)
			}
			write(t, in.ConfigPath, 0o600)
			if tc.secrets {
				in.LiteralSecrets = []Setting{{`plugin "tg" token`, "config.hcl:31"}}
			}
			tc.setup(t, in.DataDir, in.ConfigPath)
			fs := Run(in, m)
			var got []string
			for _, id := range ids(fs) {
				got = append(got, strings.NewReplacer(in.DataDir, "$DATA", in.ConfigPath, "$CFG").Replace(id))
			}
			if tc.name == "many files open" {
				if len(fs) != maxFileFindings+1 || !strings.Contains(fs[len(fs)-1].Found, "3 more files") {
					t.Errorf("findings %q, want %d files and a count of 3 more", got, maxFileFindings)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("findings:\n got %q\nwant %q", got, tc.want)
			}
			for _, f := range fs {
				if strings.Contains(f.Found+f.Fix, "0123456789abcdef") {
					t.Errorf("a finding shows a secret: %+v", f)
				}
			}
		})
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), mode); err != nil {
		t.Fatal(err)
	}
	chmod(t, path, mode) // past the umask
}

func TestExitCodeAndOutput(t *testing.T) {
	t.Parallel()
	fs := []Finding{{Info, "plugin.unpinned", "c.hcl:1", "found", "fix"}}
	if ExitCode(fs) != 0 || ExitCode(nil) != 0 {
		t.Errorf("info only: exit %d", ExitCode(fs))
	}
	fs = append(fs, Finding{Medium, "x", "", "f", "g"})
	if ExitCode(fs) != 0 {
		t.Errorf("medium: exit %d", ExitCode(fs))
	}
	fs = append(fs, Finding{High, "y", "", "f", "g"})
	if ExitCode(fs) != 1 {
		t.Errorf("high: exit %d", ExitCode(fs))
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, "c.hcl", fs, nil); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Config   string
		Findings []map[string]string
		Counts   map[string]int
	}
	if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Config != "c.hcl" || len(r.Findings) != 3 || r.Findings[2]["severity"] != "high" || r.Counts["medium"] != 1 || strings.Contains(buf.String(), `"boundary"`) {
		t.Errorf("json: %s", buf.String())
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || !reflect.DeepEqual(back.Findings, fs) {
		t.Errorf("the report does not read back: %v\n%+v", err, back.Findings)
	}
	var sev Severity
	if err := sev.UnmarshalText([]byte("urgent")); err == nil {
		t.Errorf("an unknown severity was read as %v", sev)
	}
	buf.Reset()
	_ = WriteJSON(&buf, "c.hcl", nil, nil)
	if !strings.Contains(buf.String(), `"findings": []`) {
		t.Errorf("no findings as JSON: %s", buf.String())
	}
	buf.Reset()
	_ = WriteText(&buf, "c.hcl", nil, nil)
	if !strings.HasSuffix(buf.String(), "no findings\n") || strings.Contains(buf.String(), "boundary") {
		t.Errorf("no findings as text: %q", buf.String())
	}
}

// TestBoundaryOutput: the audit says whether claude's boundary holds, in
// text (a line per part) and in JSON (the verdict with its parts), and says
// nothing of it when the machine was not probed.
func TestBoundaryOutput(t *testing.T) {
	t.Parallel()
	weak := holds
	weak.LandlockABI = 0
	for _, tc := range []struct {
		name  string
		facts *boundary.Facts
		text  []string
	}{
		{"holds", &holds, []string{"claude's boundary on this machine holds (user namespace, seccomp, Landlock)\n", "  ok       Landlock: Landlock ABI 7 in use"}},
		{"weaker", &weak, []string{"holds (user namespace, seccomp), weaker without Landlock", "  WEAKER   Landlock: Landlock is not available (ABI 0)"}},
	} {
		m := machine()
		m.Boundary = tc.facts
		var text, js bytes.Buffer
		if err := WriteText(&text, "c.hcl", nil, m.Verdict()); err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.text {
			if !strings.Contains(text.String(), s) {
				t.Errorf("%s: the text lacks %q:\n%s", tc.name, s, text.String())
			}
		}
		if err := WriteJSON(&js, "c.hcl", nil, m.Verdict()); err != nil {
			t.Fatal(err)
		}
		var r Report
		if err := json.Unmarshal(js.Bytes(), &r); err != nil || r.Boundary == nil || !r.Boundary.Holds || len(r.Boundary.Parts) != 3 || r.Boundary.Parts[2].Name != boundary.PartLandlock {
			t.Errorf("%s: json %v:\n%s", tc.name, err, js.String())
		}
	}
	if machine().Verdict() != nil {
		t.Error("an unprobed machine has a verdict")
	}
}
