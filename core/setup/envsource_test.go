package setup

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// mapEnv is a process environment for EnvSource.
type mapEnv map[string]string

func (m mapEnv) lookup(k string) (string, bool) { v, ok := m[k]; return v, ok }
func (m mapEnv) set(k, v string) error          { m[k] = v; return nil }
func (m mapEnv) unset(k string) error           { delete(m, k); return nil }

// A reload sees a token added to clawhost.env, a changed one and a removed one; a
// variable the environment set itself keeps winning; one a service manager set from the
// same file follows the file.
func TestEnvSourceReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.hcl")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, EnvFile), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("TELEGRAM_BOT_TOKEN=t1\nFROM_UNIT=u1\nMINE=file\nGONE=g\n")
	env := mapEnv{"FROM_UNIT": "u1", "MINE": "shell"}
	src, err := NewEnvSource(cfg, env.lookup, env.set, env.unset)
	if err != nil {
		t.Fatal(err)
	}
	if env["TELEGRAM_BOT_TOKEN"] != "t1" || env["MINE"] != "shell" || env["GONE"] != "g" {
		t.Fatalf("start: %v", env)
	}
	write("TELEGRAM_BOT_TOKEN=t2\nFROM_UNIT=u2\nMINE=file2\nDISCORD_BOT_TOKEN=d1\n")
	changed, err := src.Reload()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(changed)
	if want := []string{"DISCORD_BOT_TOKEN", "FROM_UNIT", "GONE", "TELEGRAM_BOT_TOKEN"}; !slices.Equal(changed, want) {
		t.Fatalf("changed %q, want %q", changed, want)
	}
	if env["TELEGRAM_BOT_TOKEN"] != "t2" || env["FROM_UNIT"] != "u2" || env["MINE"] != "shell" || env["DISCORD_BOT_TOKEN"] != "d1" {
		t.Fatalf("after reload: %v", env)
	}
	if _, ok := env["GONE"]; ok {
		t.Fatal("a variable removed from the file stayed set")
	}
	if changed, err := src.Reload(); err != nil || len(changed) != 0 {
		t.Fatalf("second reload: %q %v", changed, err)
	}
	// An unsafe file refuses the reload and changes nothing.
	if err := os.Chmod(filepath.Join(dir, EnvFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Reload(); err == nil {
		t.Fatal("a world-readable env file was read")
	}
	if env["TELEGRAM_BOT_TOKEN"] != "t2" {
		t.Fatal("a refused reload changed the environment")
	}
}
