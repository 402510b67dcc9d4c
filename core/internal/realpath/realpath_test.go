package realpath

import (
	"os"
	"path/filepath"
	"testing"
)

// Of names what filepath.EvalSymlinks names: links to directories and files,
// nested, relative and absolute, a path with none, missing paths (past a link or not, or
// below a file) and a dangling link ("").
func TestRealPathMatchesEvalSymlinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	mk := func(p string) string { p = filepath.Join(dir, p); must(t, os.MkdirAll(p, 0o755)); return p }
	a := mk("a/b/c")
	must(t, os.WriteFile(filepath.Join(a, "f"), nil, 0o644))
	must(t, os.Symlink(a, filepath.Join(dir, "abs")))
	must(t, os.Symlink("a/b", filepath.Join(dir, "rel")))
	must(t, os.Symlink("../rel/c/f", filepath.Join(a, "up")))
	must(t, os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling")))
	for _, p := range []string{
		dir, a, filepath.Join(a, "f"), filepath.Join(dir, "abs"), filepath.Join(dir, "abs/f"),
		filepath.Join(dir, "rel"), filepath.Join(dir, "rel/c/f"), filepath.Join(a, "up"),
		filepath.Join(dir, "missing"), filepath.Join(dir, "dangling"), filepath.Join(dir, "abs/../b"), "/",
		filepath.Join(dir, "abs/missing"), filepath.Join(dir, "missing/x"), filepath.Join(a, "f/x"),
	} {
		want, err := filepath.EvalSymlinks(p)
		if err != nil {
			want = ""
		}
		if got := Of(p); got != want {
			t.Errorf("Of(%q) = %q, EvalSymlinks says %q", p, got, want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
