package sdk_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateAPI = flag.Bool("update-api", false, "rewrite api.txt with the sdk's exported API as it is now")

// TestAPIIsRecorded: the exported API of every public package of the sdk
// module (internal/ aside) is recorded in api.txt, one line per
// identifier (the Go project's api/*.txt idea). A change that adds,
// removes or changes an exported identifier fails here until api.txt is
// rewritten (go test -run TestAPIIsRecorded -update-api, in sdk/): a
// break of the contract plugins build on is always a decision, visible
// in the diff of api.txt.
func TestAPIIsRecorded(t *testing.T) {
	got := exportedAPI(t, ".")
	if *updateAPI {
		if err := os.WriteFile("api.txt", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("api.txt")
	if err != nil {
		t.Fatalf("%v (run go test -run TestAPIIsRecorded -update-api in sdk/)", err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	var added, removed []string
	for _, l := range gl {
		if !slices.Contains(wl, l) {
			added = append(added, "+ "+l)
		}
	}
	for _, l := range wl {
		if !slices.Contains(gl, l) {
			removed = append(removed, "- "+l)
		}
	}
	t.Errorf("the sdk's exported API is not the one recorded in sdk/api.txt:\n%s\n%s\nIf the change is meant, run (cd sdk && go test -run TestAPIIsRecorded -update-api) and commit api.txt.",
		strings.Join(removed, "\n"), strings.Join(added, "\n"))
}

// TestAPIRecordSeesAChange: the record changes when an exported
// signature does, and not for unexported or internal code.
func TestAPIRecordSeesAChange(t *testing.T) {
	dir := t.TempDir()
	write := func(src string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "p", "p.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return exportedAPI(t, dir)
	}
	base := write("package p\n\ntype T struct{ A int; b int }\n\nfunc F(x int) error { return nil }\n\nfunc g() {}\n")
	if !strings.Contains(base, "pkg sdk/p, func F(x int) error") || !strings.Contains(base, "pkg sdk/p, type T struct, A int") || strings.Contains(base, " b int") || strings.Contains(base, "func g") {
		t.Fatalf("record:\n%s", base)
	}
	if write("package p\n\ntype T struct{ A int; b string }\n\nfunc F(x int) error { return nil }\n\nfunc g(int) {}\n") != base {
		t.Error("an unexported change changed the record")
	}
	if write("package p\n\ntype T struct{ A int64; b int }\n\nfunc F(x int) error { return nil }\n") == base {
		t.Error("a changed field type left the record as it was")
	}
}

// exportedAPI lists the exported identifiers of the packages under root,
// sorted, one per line: "pkg PATH, KIND NAME SIGNATURE" (struct fields
// and interface methods each a line of their own).
func exportedAPI(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if n := d.Name(); path != root && (n == "internal" || n == "testdata" || strings.HasPrefix(n, ".")) {
			return filepath.SkipDir
		}
		pkgs, err := parser.ParseDir(fset, path, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, pkg := range pkgs {
			if pkg.Name == "main" {
				continue
			}
			name := "sdk"
			if rel != "." {
				name += "/" + filepath.ToSlash(rel)
			}
			for _, f := range pkg.Files {
				lines = append(lines, declLines(fset, "pkg "+name+", ", f)...)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(slices.Compact(lines), "\n") + "\n"
}

func declLines(fset *token.FileSet, prefix string, f *ast.File) []string {
	var out []string
	src := func(n any) string {
		var b bytes.Buffer
		_ = printer.Fprint(&b, fset, n)
		return strings.Join(strings.Fields(b.String()), " ")
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			recv := ""
			if d.Recv != nil {
				r := src(d.Recv.List[0].Type)
				if !ast.IsExported(strings.TrimLeft(strings.SplitN(r, "[", 2)[0], "*")) {
					continue
				}
				recv = "(" + r + ") "
			}
			out = append(out, prefix+"method "+recv+d.Name.Name+strings.TrimPrefix(src(d.Type), "func"))
			if recv == "" {
				out[len(out)-1] = prefix + "func " + d.Name.Name + strings.TrimPrefix(src(d.Type), "func")
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					out = append(out, typeLines(prefix, s, src)...)
				case *ast.ValueSpec:
					kind := "var"
					if d.Tok == token.CONST {
						kind = "const"
					}
					for _, n := range s.Names {
						if n.IsExported() {
							typ := ""
							if s.Type != nil {
								typ = " " + src(s.Type)
							}
							out = append(out, prefix+kind+" "+n.Name+typ)
						}
					}
				}
			}
		}
	}
	return out
}

func typeLines(prefix string, s *ast.TypeSpec, src func(any) string) []string {
	name := s.Name.Name
	if s.TypeParams != nil {
		name += src(s.TypeParams)
	}
	alias := ""
	if s.Assign.IsValid() {
		alias = "= "
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		out := []string{prefix + "type " + name + " struct"}
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 {
				out = append(out, fmt.Sprintf("%stype %s struct, embedded %s", prefix, name, src(f.Type)))
			}
			for _, n := range f.Names {
				if n.IsExported() {
					out = append(out, fmt.Sprintf("%stype %s struct, %s %s", prefix, name, n.Name, src(f.Type)))
				}
			}
		}
		return out
	case *ast.InterfaceType:
		out := []string{prefix + "type " + name + " interface"}
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				out = append(out, fmt.Sprintf("%stype %s interface, embedded %s", prefix, name, src(m.Type)))
			}
			for _, n := range m.Names {
				if n.IsExported() {
					out = append(out, fmt.Sprintf("%stype %s interface, %s%s", prefix, name, n.Name, strings.TrimPrefix(src(m.Type), "func")))
				} else {
					out = append(out, fmt.Sprintf("%stype %s interface, unexported methods", prefix, name))
				}
			}
		}
		return out
	default:
		return []string{prefix + "type " + name + " " + alias + src(s.Type)}
	}
}
