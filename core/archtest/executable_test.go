package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTestsWriteProgramsWithWriteExecutable: a test writes a file with an
// execute bit through sdktest.WriteExecutable, never os.WriteFile. The
// package's other tests start processes in parallel, and one that inherits
// the descriptor between fork and exec makes running the new program fail
// with "text file busy" (CI failed so once, 2026-11-27); WriteExecutable
// holds syscall.ForkLock while the file is open.
func TestTestsWriteProgramsWithWriteExecutable(t *testing.T) {
	checked := 0
	for _, p := range goPackages(t) {
		for _, f := range append(slices.Clone(p.TestGoFiles), p.XTestGoFiles...) {
			checked++
			path := filepath.Join(p.Dir, f)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, pos := range executableWrites(t, path, src) {
				t.Errorf("%s: a test writes a program with os.WriteFile; use sdktest.WriteExecutable", pos)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d test files", checked)
	}
}

// TestExecutableWritesCanFail: the rule sees an executable mode, and not a
// plain file's.
func TestExecutableWritesCanFail(t *testing.T) {
	src := `package p

import "os"

func f() {
	_ = os.WriteFile("a.sh", nil, 0o700)
	_ = os.WriteFile("b.sh", nil, 0755)
	_ = os.WriteFile("c.txt", nil, 0o600)
}
`
	got := executableWrites(t, "p_test.go", []byte(src))
	if len(got) != 2 || !strings.HasPrefix(got[0], "p_test.go:6:") || !strings.HasPrefix(got[1], "p_test.go:7:") {
		t.Fatalf("found %q, want lines 6 and 7", got)
	}
}

// executableWrites returns the positions of the os.WriteFile calls in src
// whose mode is a literal with an execute bit.
func executableWrites(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 3 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "WriteFile" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "os" {
			return true
		}
		lit, ok := call.Args[2].(*ast.BasicLit)
		if !ok || lit.Kind != token.INT {
			return true
		}
		if mode, err := strconv.ParseUint(lit.Value, 0, 32); err == nil && mode&0o111 != 0 {
			found = append(found, fset.Position(call.Pos()).String())
		}
		return true
	})
	return found
}
