package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// methodLimits bound the methods of the composers' types: a rule that
// decides gets a stage of its own that returns a verdict (core/admission,
// core/agents), so the composer only wires and sequences. A type that
// grows past its limit is a stage waiting to be split out.
var methodLimits = []struct {
	dir, typ string
	max      int
}{
	{"core/gateway", "Gateway", 40},
}

// TestComposerMethodLimits counts the methods declared on each type of
// methodLimits (value and pointer receivers, test files aside).
func TestComposerMethodLimits(t *testing.T) {
	for _, l := range methodLimits {
		n, err := methodCount(filepath.Join("../..", l.dir), l.typ)
		if err != nil {
			t.Fatal(err)
		}
		if n > l.max {
			t.Errorf("%s.%s has %d methods, at most %d: move a rule into a stage of its own (see core/admission)", l.dir, l.typ, n, l.max)
		}
		if n == 0 {
			t.Errorf("%s.%s has no methods: the counter did not find the type", l.dir, l.typ)
		}
	}
}

// methodCount is the number of methods declared on typ in the package in
// dir (its .go files without the _test ones).
func methodCount(dir, typ string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	fset := token.NewFileSet()
	n := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return 0, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			rt := fn.Recv.List[0].Type
			if star, ok := rt.(*ast.StarExpr); ok {
				rt = star.X
			}
			if idx, ok := rt.(*ast.IndexExpr); ok { // a generic receiver T[K]
				rt = idx.X
			}
			if id, ok := rt.(*ast.Ident); ok && id.Name == typ {
				n++
			}
		}
	}
	return n, nil
}

// TestMethodCountCanFail makes sure the counter counts: pointer and value
// receivers, not other types, not test files.
func TestMethodCountCanFail(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("package p\n\ntype T struct{}\ntype U struct{}\n\n")
	for i := range 41 {
		if i%2 == 0 {
			fmt.Fprintf(&b, "func (t *T) m%d() {}\n", i)
		} else {
			fmt.Fprintf(&b, "func (T) m%d() {}\n", i)
		}
	}
	b.WriteString("func (u *U) other() {}\nfunc free() {}\n")
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc (t *T) inTest() {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := methodCount(dir, "T"); err != nil || n != 41 {
		t.Errorf("counted %d methods of T (%v), want 41", n, err)
	}
	if n, _ := methodCount(dir, "U"); n != 1 {
		t.Errorf("counted %d methods of U, want 1", n)
	}
}
