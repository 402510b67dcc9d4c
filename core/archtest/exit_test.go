package archtest

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyMainExits: os.Exit is called in package main only. A library
// that exits skips its callers' deferred cleanup and cannot be tested or
// composed; sdk.Serve returns the plugin's exit code for its main instead.
func TestOnlyMainExits(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Name,Dir,GoFiles", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for {
		var p struct {
			ImportPath, Name, Dir string
			GoFiles               []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		if p.Name == "main" {
			continue
		}
		for _, f := range p.GoFiles {
			checked++
			for _, pos := range exits(t, filepath.Join(p.Dir, f)) {
				t.Errorf("%s: os.Exit outside package main (%s)", pos, rel(p.ImportPath))
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d files", checked)
	}
}

// exits returns the positions of the os.Exit calls in the file at path.
func exits(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Exit" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" {
			out = append(out, fset.Position(sel.Pos()).String())
		}
		return true
	})
	return out
}
