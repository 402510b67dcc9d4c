package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The size limits of the house style: a function longer than maxFuncLines
// does more than one thing, a file longer than maxFileLines holds more than
// one concept. Lines are counted from the func keyword to the closing brace,
// and over the whole file, comments included.
const (
	maxFuncLines = 100
	maxFileLines = 650
)

// oversized are the functions ("path:Func" or "path:Type.Method") and files
// ("path") that broke the limits when they were introduced. The list may only
// shrink: TestSizeLimits fails for an entry that no longer exceeds its limit
// (delete the entry) as it does for a new function or file over the limit
// (split it).
var oversized = map[string]bool{
	// A table of every command, one entry a few lines each.
	"core/cli/cli.go:commandTable": true,
}

// TestSizeLimits checks every non-test, non-generated Go file of the
// repository's modules against maxFuncLines and maxFileLines.
func TestSizeLimits(t *testing.T) {
	over := map[string]int{}
	checked := 0
	for _, path := range sourceFiles(t) {
		checked++
		for name, n := range measure(t, path) {
			over[name] = n
		}
	}
	if checked < 300 {
		t.Fatalf("checked only %d files", checked)
	}
	var names []string
	for name := range over {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if oversized[name] {
			continue
		}
		limit, what := maxFuncLines, "function"
		if !strings.Contains(name, ":") {
			limit, what = maxFileLines, "file"
		}
		t.Errorf("%s: %s of %d lines (limit %d): split it", name, what, over[name], limit)
	}
	for name := range oversized {
		if _, ok := over[name]; !ok {
			t.Errorf("%s is within the limits now (or gone): delete it from oversized", name)
		}
	}
}

// sourceFiles returns the repository-relative paths of the non-test Go
// files of every package of the modules, whatever their build constraints,
// leaving out proto/gen.
func sourceFiles(t *testing.T) []string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, p := range goPackages(t) {
		if under(rel(p.ImportPath), "proto/gen") {
			continue
		}
		for _, f := range append(p.GoFiles, p.IgnoredGoFiles...) {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			path, err := filepath.Rel(root, filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, filepath.ToSlash(path))
		}
	}
	return files
}

// measure parses the file at path (relative to the repository's root) and
// returns what in it is over the limits: the file by its path, a function
// as path:Name or path:Type.Method, with its length in lines. A generated
// file is not measured.
func measure(t *testing.T, path string) map[string]int {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join("../..", path), nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	return over(fset, f, path)
}

func over(fset *token.FileSet, f *ast.File, path string) map[string]int {
	found := map[string]int{}
	if ast.IsGenerated(f) {
		return found
	}
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
		found[path] = n
	}
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
			found[path+":"+funcName(fd)] = n
		}
	}
	return found
}

// funcName is a function's name, a method's prefixed with its receiver's
// type (without a pointer or type parameters).
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// TestSizeLimitsCanFail: the measure finds a function and a file one line
// over the limits and passes what sits at them, and leaves generated code
// alone.
func TestSizeLimitsCanFail(t *testing.T) {
	src := func(header string, bodyLines, padding int) string {
		var b strings.Builder
		b.WriteString(header + "package p\n\n")
		// A function of bodyLines+2 lines: the signature, the body, the brace.
		b.WriteString("func (s *S[T]) Long() {\n")
		for range bodyLines {
			b.WriteString("\t_ = 1\n")
		}
		b.WriteString("}\n")
		b.WriteString("func Short() {\n}\n")
		for range padding {
			b.WriteString("// pad\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		name      string
		header    string
		bodyLines int
		padding   int
		want      []string
	}{
		{name: "at the limits", bodyLines: maxFuncLines - 2, padding: maxFileLines - maxFuncLines - 4, want: nil},
		{name: "one over", bodyLines: maxFuncLines - 1, padding: maxFileLines - maxFuncLines - 4, want: []string{"p.go", "p.go:S.Long"}},
		{name: "generated", header: "// Code generated by hand. DO NOT EDIT.\n\n", bodyLines: 2 * maxFuncLines, padding: maxFileLines, want: nil},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "p.go", src(tc.header, tc.bodyLines, tc.padding), parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for name := range over(fset, f, "p.go") {
			got = append(got, name)
		}
		slices.Sort(got)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: over the limits %v, want %v", tc.name, got, tc.want)
		}
	}
}
