package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadAdminDisabled: the commands that go through the admin endpoint
// refuse a configuration with admin { listen = "" }, saying how to enable
// it (and what else would do, where something would).
func TestLoadAdminDisabled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "data_dir = %q\nadmin {\n  listen = \"\"\n}\n", filepath.Join(dir, "data")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, orElse string }{{"status", ""}, {"reload", ", or send the process SIGHUP"}} {
		var w bytes.Buffer
		if got, ok := loadAdmin(c.name, hostAt{config: cfg}, &w, c.orElse); ok || got != nil {
			t.Errorf("%s: loaded %v with the admin endpoint disabled", c.name, got)
		}
		want := "clawhost " + c.name + ": the admin endpoint is disabled; enable it: admin { listen = \"127.0.0.1:"
		if !strings.HasPrefix(w.String(), want) || !strings.HasSuffix(w.String(), "}"+c.orElse+"\n") {
			t.Errorf("%s: %q, want %q…%q", c.name, w.String(), want, c.orElse)
		}
	}
}
