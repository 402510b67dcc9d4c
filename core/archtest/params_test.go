package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"
)

// maxParams bounds a function's parameters (the receiver not counted): a
// function that needs more is handed a struct that names what they are
// together (issue 82: turn.runAgent had 12, then 13).
const maxParams = 9

// manyParams are the functions over maxParams when the rule came, each
// waiting for its parameter struct. The list may only shrink.
var manyParams = map[string]bool{}

// TestParameterLimits checks every non-test, non-generated Go file of the
// repository's modules against maxParams.
func TestParameterLimits(t *testing.T) {
	found := map[string]int{}
	for _, path := range sourceFiles(t) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join("../..", path), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for name, n := range overParams(f, path) {
			found[name] = n
		}
	}
	var names []string
	for name := range found {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !manyParams[name] {
			t.Errorf("%s: %d parameters (limit %d): hand it a struct that names them", name, found[name], maxParams)
		}
	}
	for name := range manyParams {
		if _, ok := found[name]; !ok {
			t.Errorf("%s is within the limit now (or gone): delete it from manyParams", name)
		}
	}
}

// overParams are the functions of f with more than maxParams parameters,
// as path:Name or path:Type.Method.
func overParams(f *ast.File, path string) map[string]int {
	found := map[string]int{}
	if ast.IsGenerated(f) {
		return found
	}
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		n := 0
		for _, p := range fd.Type.Params.List {
			n += max(len(p.Names), 1)
		}
		if n > maxParams {
			found[path+":"+funcName(fd)] = n
		}
	}
	return found
}

// TestParameterLimitsCanFail: ten parameters are found, nine pass, and
// grouped names count one each.
func TestParameterLimitsCanFail(t *testing.T) {
	src := `package p
func ok(a, b, c, d, e, f, g, h, i int) {}
func tooMany(a, b, c, d, e, f, g, h, i, j int) {}
type T struct{}
func (T) method(a int, b, c string, d, e, f, g, h, i, j bool) {}
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := overParams(f, "p.go")
	if len(got) != 2 || got["p.go:tooMany"] != 10 || got["p.go:T.method"] != 10 {
		t.Errorf("overParams = %v, want tooMany and T.method at 10", got)
	}
	if _, bad := got["p.go:ok"]; bad {
		t.Error("a function at the limit was reported")
	}
}
