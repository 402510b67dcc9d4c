package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestOnlyMainExits: os.Exit is called in package main only, and every
// main exits with sdk.Serve's code. A library
// that exits skips its callers' deferred cleanup and cannot be tested or
// composed; sdk.Serve returns the plugin's exit code for its main instead.
func TestOnlyMainExits(t *testing.T) {
	checked := 0
	for _, p := range goPackages(t) {
		for _, f := range p.GoFiles {
			checked++
			ex, dropped := exits(t, filepath.Join(p.Dir, f))
			for _, pos := range dropped {
				t.Errorf("%s: sdk.Serve's exit code is dropped: call os.Exit(sdk.Serve(p))", pos)
			}
			if p.Name == "main" {
				continue
			}
			for _, pos := range ex {
				t.Errorf("%s: os.Exit outside package main (%s)", pos, rel(p.ImportPath))
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d files", checked)
	}
}

// goPackage is a package of the repository's modules as go list -json
// tells it.
type goPackage struct {
	ImportPath, Name, Dir     string
	GoFiles, IgnoredGoFiles   []string
	TestGoFiles, XTestGoFiles []string
}

// goPackages lists every package of the repository's modules with its
// files (IgnoredGoFiles: those the build constraints leave out here) and
// its test files.
func goPackages(t *testing.T) []goPackage {
	t.Helper()
	return goList[goPackage](t, "ImportPath,Name,Dir,GoFiles,IgnoredGoFiles,TestGoFiles,XTestGoFiles", module+"/...")
}

// exits returns the positions of the os.Exit calls in the file at path,
// and of the calls of sdk.Serve whose result is dropped (a statement).
func exits(t *testing.T, path string) (exit, dropped []string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if st, ok := n.(*ast.ExprStmt); ok && isCall(st.X, "sdk", "Serve") {
			dropped = append(dropped, fset.Position(st.Pos()).String())
		}
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Exit" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" {
			exit = append(exit, fset.Position(sel.Pos()).String())
		}
		return true
	})
	return exit, dropped
}

// isCall reports whether e calls pkg.name.
func isCall(e ast.Expr, pkg, name string) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}
