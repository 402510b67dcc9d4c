package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginNew: `clawhost plugin new -sdk CHECKOUT go tool|hook NAME`
// writes a module that builds and passes `clawhost plugin test` as
// written. The build runs in a Go workspace with this checkout's modules
// (the machine has no module proxy: the checkout's versions are the ones
// cached); an author runs go mod tidy instead.
func TestPluginNew(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"python", "tool", "x"}, {"go", "channel", "x"}, {"go", "tool", "Bad_Name"}} {
		var out, errb bytes.Buffer
		if code := Main(append([]string{"plugin", "new", "-dir", filepath.Join(t.TempDir(), "x")}, bad...), nil, &out, &errb); code != 2 {
			t.Errorf("plugin new %s: exit %d, want 2 (%s)", strings.Join(bad, " "), code, errb.String())
		}
	}
	for _, kind := range []string{"tool", "hook"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mod := filepath.Join(dir, "clawhost-my"+kind)
			var out, errb bytes.Buffer
			if code := Main([]string{"plugin", "new", "-dir", mod, "-sdk", root, "go", kind, "my" + kind}, nil, &out, &errb); code != 0 {
				t.Fatalf("plugin new: exit %d: %s", code, errb.String())
			}
			work := "go 1.26.8\n\nuse (\n\t" + mod + "\n\t" + root + "\n\t" + filepath.Join(root, "sdk") + "\n\t" +
				filepath.Join(root, "proto") + "\n\t" + filepath.Join(root, "markup") + "\n)\n"
			if err := os.WriteFile(filepath.Join(dir, "go.work"), []byte(work), 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(root, "go.work.sum")); err == nil {
				_ = os.WriteFile(filepath.Join(dir, "go.work.sum"), b, 0o644)
			}
			bin := filepath.Join(mod, "clawhost-my"+kind)
			build := exec.Command("go", "build", "-o", bin, ".")
			build.Dir = mod
			build.Env = append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work"), "GOPROXY=off", "GOFLAGS=-buildvcs=false")
			if b, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, b)
			}
			out.Reset()
			errb.Reset()
			if code := Main([]string{"plugin", "test", bin}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), " 0 failed") {
				t.Errorf("plugin test: exit %d\n%s\n%s", code, out.String(), errb.String())
			}
		})
	}
}
