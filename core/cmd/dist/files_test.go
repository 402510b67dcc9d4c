package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/doctor"
)

// root is the checkout: the module root, two levels up.
const root = "../../.."

// TestDockerfile: docker cannot run here, so the Dockerfile is checked
// for what can go stale without it: every COPY from the build context
// names files of the checkout, every COPY from the build stage names
// files the release archive has, and the claude CLI it installs is the
// one clawhost is tested with (and make claude-cli installs).
func TestDockerfile(t *testing.T) {
	t.Parallel()
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	inArchive := map[string]bool{"clawhost": true}
	for _, d := range docs {
		inArchive[d] = true
	}
	plugins, _ := filepath.Glob(filepath.Join(root, "plugins", "*", "cmd", "clawhost-*"))
	copies := 0
	for _, line := range strings.Split(string(df), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "COPY" {
			continue
		}
		copies++
		fromStage := strings.HasPrefix(f[1], "--from=")
		srcs := f[1 : len(f)-1]
		if fromStage {
			srcs = f[2 : len(f)-1]
		}
		for _, src := range srcs {
			switch {
			case fromStage && src == "/out/clawhost-*":
				if len(plugins) == 0 {
					t.Errorf("COPY %s: no plugins/*/cmd/clawhost-* to build", src)
				}
			case fromStage:
				if !strings.HasPrefix(src, "/out/") || !inArchive[strings.TrimPrefix(src, "/out/")] {
					t.Errorf("COPY --from %s: not in the release archive (%v)", src, inArchive)
				}
			case src == ".":
			default:
				if _, err := os.Stat(filepath.Join(root, src)); err != nil {
					t.Errorf("COPY %s: %v", src, err)
				}
			}
		}
	}
	if copies < 5 {
		t.Errorf("%d COPY lines: the parse is wrong", copies)
	}
	arg := regexp.MustCompile(`(?m)^ARG CLAUDE_VERSION=(\S+)$`).FindSubmatch(df)
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mkv := regexp.MustCompile(`(?m)^CLAUDE_VERSION := (\S+)$`).FindSubmatch(mk)
	if arg == nil || mkv == nil || string(arg[1]) != doctor.TestedClaudeVersion || string(mkv[1]) != doctor.TestedClaudeVersion {
		t.Errorf("claude CLI versions: Dockerfile %q, Makefile %q, tested %s", arg, mkv, doctor.TestedClaudeVersion)
	}
}

// TestExampleConfigs: the image's configuration and the compose example's
// load without errors, with and without the optional environment.
func TestExampleConfigs(t *testing.T) {
	for _, env := range []map[string]string{
		{"CLAWHOST_HOST_ID": "h1"},
		{"CLAWHOST_HOST_ID": "h2", "ANTHROPIC_API_KEY": "k", "TELEGRAM_BOT_TOKEN": "123:abc", "DISCORD_BOT_TOKEN": "d"},
	} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		for _, f := range []string{"examples/docker/config.hcl", "examples/compose/config.hcl"} {
			cfg, diags := config.Load(filepath.Join(root, f))
			if diags.HasErrors() {
				t.Errorf("%s with %v: %v", f, env, diags)
				continue
			}
			if cfg.DataDir != "/data" || cfg.Agent.Workspace != "/workspace" {
				t.Errorf("%s: data_dir %s, workspace %s", f, cfg.DataDir, cfg.Agent.Workspace)
			}
			if strings.Contains(f, "compose") && (cfg.Storage.Engine != config.EnginePostgres || cfg.Storage.HostID != env["CLAWHOST_HOST_ID"]) {
				t.Errorf("%s: storage %+v", f, cfg.Storage)
			}
			if (cfg.Agent.Env["ANTHROPIC_API_KEY"] != "") != (env["ANTHROPIC_API_KEY"] != "") {
				t.Errorf("%s: ANTHROPIC_API_KEY in agent.env %v, in the environment %v", f, cfg.Agent.Env["ANTHROPIC_API_KEY"] != "", env["ANTHROPIC_API_KEY"] != "")
			}
		}
	}
}

// TestComposeFile: no YAML parser is among the module's dependencies, so
// the compose file is checked as text: the three services, both hosts on
// the PostgreSQL socket volume with their own host id, data volume and the
// configuration above.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(root, "examples/compose/compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(s, "\t") {
		t.Error("a tab in YAML")
	}
	for _, want := range []string{"\n  db:\n", "\n  h1:\n", "\n  h2:\n", "CLAWHOST_HOST_ID: h1\n", "CLAWHOST_HOST_ID: h2\n",
		"- h1-data:/data\n", "- h2-data:/data\n", "- pgsocket:/var/run/postgresql\n", "- ./config.hcl:/etc/clawhost/config.hcl:ro\n", "build: ../..\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("compose.yaml lacks %q", want)
		}
	}
}

// TestByModule: a plugin in a module of its own is built in that module,
// the rest in the repository's.
func TestByModule(t *testing.T) {
	repo := t.TempDir()
	for _, d := range []string{"plugins/a/cmd/clawhost-a", "plugins/m/cmd/clawhost-m"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "plugins/m/go.mod"), []byte("module m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := byModule(repo, []string{"./core/cmd/clawhost", "./plugins/a/cmd/clawhost-a", "./plugins/m/cmd/clawhost-m"})
	want := []module{{dir: repo, pkgs: []string{"./core/cmd/clawhost", "./plugins/a/cmd/clawhost-a"}}, {dir: filepath.Join(repo, "plugins/m"), pkgs: []string{"./cmd/clawhost-m"}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("byModule = %v, want %v", got, want)
	}
}
