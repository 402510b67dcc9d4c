package cli

import (
	"bytes"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"text/template"
)

// skeletons are the templates of `clawhost plugin new`, with [[ ]] as
// their delimiters (Go's composite literals are full of {{).
//
//go:embed skeleton/*.tmpl
var skeletons embed.FS

// skeletonKinds are the kinds `clawhost plugin new go` writes, with the
// template of each.
var skeletonKinds = map[string]string{"tool": "tool.go.tmpl", "hook": "hook.go.tmpl"}

// pluginNameRe is what a new plugin's name may be: it names the binary
// (clawhost-NAME), the plugin block and the tool.
var pluginNameRe = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// pluginNew is `clawhost plugin new [-dir DIR] [-sdk CHECKOUT] go tool|hook
// NAME`: a Go module with a plugin of the kind that builds and passes
// `clawhost plugin test` as written.
func pluginNew(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clawhost plugin new", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the directory to write (default ./clawhost-NAME; it must not exist)")
	sdk := fs.String("sdk", "", "a clawhost checkout: go.mod points the sdk there (needed until the sdk is tagged)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return help([]string{"plugin new"}, stdout, stderr)
		}
		return 2
	}
	if fs.NArg() != 3 {
		fmt.Fprintln(stderr, "clawhost plugin new: want LANGUAGE KIND NAME, e.g. clawhost plugin new -sdk ../clawhost go tool orders")
		return 2
	}
	lang, kind, name := fs.Arg(0), fs.Arg(1), fs.Arg(2)
	tmpl, ok := skeletonKinds[kind]
	switch {
	case lang != "go":
		fmt.Fprintf(stderr, "clawhost plugin new: %q: only Go skeletons are written so far; for Python start from examples/python-echo and package it with clawhost plugin package\n", lang)
		return 2
	case !ok:
		fmt.Fprintf(stderr, "clawhost plugin new: kind %q: want tool or hook (a channel starts from examples/channel-template)\n", kind)
		return 2
	case !pluginNameRe.MatchString(name):
		fmt.Fprintf(stderr, "clawhost plugin new: name %q: use 1 to 32 lower-case letters, digits and \"-\", a letter first\n", name)
		return 2
	}
	if *dir == "" {
		*dir = "clawhost-" + name
	}
	if *sdk != "" {
		abs, err := filepath.Abs(*sdk)
		if err == nil {
			_, err = os.Stat(filepath.Join(abs, "sdk", "go.mod"))
		}
		if err != nil {
			fmt.Fprintf(stderr, "clawhost plugin new: -sdk %s: not a clawhost checkout: %v\n", *sdk, err)
			return 2
		}
		*sdk = abs
	}
	if err := writeSkeleton(*dir, tmpl, struct{ Name, SDK string }{name, *sdk}); err != nil {
		fmt.Fprintf(stderr, "clawhost plugin new: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s/main.go and go.mod; then: cd %s && go mod tidy && go build && clawhost plugin test ./clawhost-%s\n", *dir, *dir, name)
	if *sdk == "" {
		fmt.Fprintln(stdout, "the sdk is not tagged yet: point go.mod at a clawhost checkout (replace directives), or run again with -sdk CHECKOUT")
	}
	return 0
}

// writeSkeleton makes dir (it must not exist) with main.go from tmpl and
// go.mod, both executed with data.
func writeSkeleton(dir, tmpl string, data any) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for name, src := range map[string]string{"main.go": tmpl, "go.mod": "go.mod.tmpl"} {
		t, err := template.New(src).Delims("[[", "]]").ParseFS(skeletons, "skeleton/"+src)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
