package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// changedBenchmarks returns, of the benchmark functions named, those whose
// code differs between the work tree of the repository at dir and the
// build rev: the base of `make bench BENCH_BASE=rev` runs its own copy of
// each benchmark, so beside such a base a changed benchmark's CHANGE is
// partly the measurement's. The function's own code is compared, without
// its comments; a change in a helper it calls is not seen. A benchmark
// that rev does not have is not in the result (the base has no figure).
func changedBenchmarks(dir, rev string, names []string) (map[string]bool, error) {
	root, err := git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	root = strings.TrimSpace(root)
	changed := map[string]bool{}
	for _, name := range names {
		path := benchFile(root, "", name)
		if path == "" {
			continue // not in the tree: nothing to compare
		}
		src, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			return nil, err
		}
		now, ok := funcText(src, name)
		if !ok {
			continue
		}
		before, ok := funcAt(root, rev, path, name)
		if !ok {
			continue
		}
		if before != now {
			changed[name] = true
		}
	}
	return changed, nil
}

// funcAt is funcText of name at rev: in the file at path, where the tree
// has it, or else in the file that defines it at rev.
func funcAt(root, rev, path, name string) (string, bool) {
	if src, err := git(root, "show", rev+":"+path); err == nil {
		if text, ok := funcText([]byte(src), name); ok {
			return text, true
		}
	}
	p := benchFile(root, rev, name)
	if p == "" || p == path {
		return "", false
	}
	src, err := git(root, "show", rev+":"+p)
	if err != nil {
		return "", false
	}
	return funcText([]byte(src), name)
}

// benchFile is the path, relative to root, of the test file that defines
// func name at rev ("" for the work tree); "" when none does.
func benchFile(root, rev, name string) string {
	args := []string{"grep", "-l", "-e", "^func " + name + "("}
	if rev != "" {
		args = append(args, rev)
	}
	out, err := git(root, append(args, "--", "*_test.go")...)
	if err != nil {
		return "" // git grep exits 1 when nothing matches
	}
	first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if rev != "" {
		first = strings.TrimPrefix(first, rev+":")
	}
	return first
}

// funcText is the code of the top-level function name in the Go source
// src, printed without its comments; false when src has no such function.
func funcText(src []byte, name string) (string, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return "", false
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name != name {
			continue
		}
		fd.Doc = nil
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, fd); err != nil {
			return "", false
		}
		return b.String(), true
	}
	return "", false
}

// git runs git in dir and returns its standard output.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
