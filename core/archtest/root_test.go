package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The root package core holds the daemon's lifecycle only (issue 54): what
// it composes lives in packages of their own (parts), so the root stays
// small enough to read in one sitting and offers its command line little
// more than Host.
const (
	// rootMaxLines bounds the root package's non-test lines.
	rootMaxLines = 2000
	// rootMaxExported bounds its exported names (types, functions,
	// constants and variables at the package level; methods aside).
	rootMaxExported = 10
)

// rootSize is the non-test line count and the exported top-level names
// of the Go files in srcs (file name → source).
func rootSize(t *testing.T, srcs map[string]string) (lines int, exported []string) {
	t.Helper()
	fset := token.NewFileSet()
	for name, src := range srcs {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		lines += strings.Count(src, "\n")
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					exported = append(exported, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							exported = append(exported, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								exported = append(exported, n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(exported)
	return lines, exported
}

// TestRootComposes: the root package core has at most rootMaxLines lines
// and rootMaxExported exported names. A feature that would grow it gets a
// package of its own (docs/where-a-change-goes.md says which).
func TestRootComposes(t *testing.T) {
	t.Parallel()
	srcs := map[string]string{}
	for name, src := range repoFiles(t, "core") {
		if filepath.Dir(name) == "core" {
			srcs[name] = src
		}
	}
	if len(srcs) == 0 {
		t.Fatal("no non-test Go files in the root package: the check would see nothing")
	}
	lines, exported := rootSize(t, srcs)
	if lines > rootMaxLines {
		t.Errorf("the root package core has %d lines (at most %d): move what it composes into a package of its own (docs/where-a-change-goes.md)", lines, rootMaxLines)
	}
	if len(exported) > rootMaxExported {
		t.Errorf("the root package core exports %d names (at most %d): %s", len(exported), rootMaxExported, strings.Join(exported, ", "))
	}
}

// TestRootSizeCounts makes sure the count can fail: lines of test files
// and methods do not count, every other exported name does.
func TestRootSizeCounts(t *testing.T) {
	t.Parallel()
	lines, exported := rootSize(t, map[string]string{
		"core/a.go":      "package core\n\nconst A, b = 1, 2\n\nvar V int\n\ntype T struct{}\n\nfunc (T) M() {}\n\nfunc F() {}\n\nfunc g() {}\n",
		"core/a_test.go": "package core\n\nfunc TestX() {}\n",
	})
	if lines != 13 {
		t.Errorf("lines = %d, want 13", lines)
	}
	if want := []string{"A", "F", "T", "V"}; !slices.Equal(exported, want) {
		t.Errorf("exported = %v, want %v", exported, want)
	}
}
