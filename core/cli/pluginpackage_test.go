package cli

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPluginPackage: `clawhost plugin package` writes an executable zipapp
// of the directory's .py files (not others, not subdirectories) and the
// descriptor set, with the #! line asked for, readable as a zip from the
// file's start; a directory without __main__.py is refused.
func TestPluginPackage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "hello")
	for name, text := range map[string]string{"__main__.py": "import helper\n", "helper.py": "X = 1\n", "notes.txt": "no", "sub/deep.py": "no"} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "clawhost-hello")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"plugin", "package", "-python", "/usr/bin/python3", "-o", out, src}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("the package: %v, mode %v", err, fi.Mode())
	}
	b, _ := os.ReadFile(out)
	if !bytes.HasPrefix(b, []byte("#!/usr/bin/python3\n")) {
		t.Errorf("the package starts %q", b[:min(len(b), 30)])
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Name == PythonRuntime {
			rc, _ := f.Open()
			got, _ := io.ReadAll(rc)
			rc.Close()
			if want, _ := renderSkeleton(PythonRuntime, skeletonData{}); !bytes.Equal(got, want) {
				t.Errorf("the package's %s is not this binary's runtime", PythonRuntime)
			}
		}
	}
	slices.Sort(names)
	// A plugin without a runtime of its own gets this binary's.
	if want := []string{"__main__.py", PythonDescriptor, PythonRuntime, "helper.py"}; !slices.Equal(names, want) {
		t.Errorf("the package holds %q, want %q", names, want)
	}
	// The zip's own offsets are right (what python's zipimport reads):
	// the first local header is where the central directory says.
	if off, err := zr.File[0].DataOffset(); err != nil || off <= int64(len("#!/usr/bin/python3\n")) {
		t.Errorf("the first file's data at %d: %v", off, err)
	}

	if err := os.Remove(filepath.Join(src, "__main__.py")); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := Main([]string{"plugin", "package", "-o", out, src}, nil, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "no __main__.py") {
		t.Errorf("without __main__.py: exit %d, %q", code, stderr.String())
	}
}
