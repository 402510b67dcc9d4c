package cli

import (
	"bytes"
	"embed"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

// skeletons are the files of `clawhost plugin new`: templates (*.tmpl,
// with [[ ]] as their delimiters: Go's composite literals are full of {{)
// and clawhost_plugin.py, the Python runtime, written as it is (its one
// copy: `plugin package` adds it to a plugin that has none, as
// examples/python-echo). channel.go.tmpl renders
// examples/channel-template/main.go, kept equal by
// TestSkeletonsMatchExamples.
//
//go:embed skeleton/*.tmpl skeleton/clawhost_plugin.py
var skeletons embed.FS

// skeletonFile is one file `clawhost plugin new` writes: name in the new
// directory, src under skeleton/ (executed as a template when it ends in
// .tmpl).
type skeletonFile struct{ name, src string }

// skeletonKinds are the files `clawhost plugin new` writes, by language and
// kind.
var skeletonKinds = map[string]map[string][]skeletonFile{
	"go": {
		"channel": {{"main.go", "channel.go.tmpl"}, {"go.mod", "go.mod.tmpl"}},
		"hook":    {{"main.go", "hook.go.tmpl"}, {"go.mod", "go.mod.tmpl"}},
		"tool":    {{"main.go", "tool.go.tmpl"}, {"go.mod", "go.mod.tmpl"}},
	},
	"python": {
		"channel": {{"__main__.py", "channel.py.tmpl"}, {"clawhost_plugin.py", "clawhost_plugin.py"}},
		"hook":    {{"__main__.py", "hook.py.tmpl"}, {"clawhost_plugin.py", "clawhost_plugin.py"}},
		"tool":    {{"__main__.py", "tool.py.tmpl"}, {"clawhost_plugin.py", "clawhost_plugin.py"}},
	},
}

// skeletonData is what the templates see.
type skeletonData struct {
	Name string // the plugin's name: clawhost-NAME, plugin "NAME"
	SDK  string // Go: the clawhost checkout go.mod points the sdk at, or ""
	Dir  string // Python: the directory written, as given
	Path string // Go channel: the binary in its doc comment's example
}

// pluginNameRe is what a new plugin's name may be: it names the binary
// (clawhost-NAME), the plugin block and the tool.
var pluginNameRe = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// spoolInject is the -inject command of `clawhost plugin test` for the
// channel skeletons: a message written aside in the spool, then renamed
// into its inbox (the plugin never reads half of one).
const spoolInject = `printf %s "$CLAWHOST_TEST_TEXT" > spool/$$.tmp && mv spool/$$.tmp spool/inbox/$(date +%s%N).txt`

// pluginNew is `clawhost plugin new [-dir DIR] [-sdk CHECKOUT] go|python
// channel|hook|tool NAME`: a plugin of the kind that builds (Go) or is
// packaged (Python) and passes `clawhost plugin test` as written.
func pluginNew(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clawhost plugin new", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the directory to write (default ./clawhost-NAME for Go, ./NAME for Python; it must not exist)")
	sdk := fs.String("sdk", "", "Go: a clawhost checkout go.mod points the sdk at (needed until the sdk is tagged)")
	if code, ok := parseFlags(fs, args, "", stdout, stderr, "plugin new"); !ok {
		return code
	}
	if fs.NArg() != 3 {
		fmt.Fprintln(stderr, "clawhost plugin new: want LANGUAGE KIND NAME, e.g. clawhost plugin new -sdk ../clawhost go tool orders")
		return 2
	}
	lang, kind, name := fs.Arg(0), fs.Arg(1), fs.Arg(2)
	kinds, ok := skeletonKinds[lang]
	if !ok {
		fmt.Fprintf(stderr, "clawhost plugin new: language %q: want go or python\n", lang)
		return 2
	}
	files, ok := kinds[kind]
	switch {
	case !ok:
		fmt.Fprintf(stderr, "clawhost plugin new: kind %q: want channel, hook or tool\n", kind)
		return 2
	case !pluginNameRe.MatchString(name):
		fmt.Fprintf(stderr, "clawhost plugin new: name %q: use 1 to 32 lower-case letters, digits and \"-\", a letter first\n", name)
		return 2
	case lang == "python" && *sdk != "":
		fmt.Fprintln(stderr, "clawhost plugin new: -sdk is for Go plugins")
		return 2
	}
	if *dir == "" {
		*dir = name
		if lang == "go" {
			*dir = "clawhost-" + name
		}
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
	data := skeletonData{Name: name, SDK: *sdk, Dir: *dir, Path: "./clawhost-" + name}
	if err := writeSkeleton(*dir, files, data); err != nil {
		fmt.Fprintf(stderr, "clawhost plugin new: %v\n", err)
		return 1
	}
	inject := ""
	if kind == "channel" {
		inject = "-inject '" + spoolInject + "' "
	}
	var names []string
	for _, f := range files {
		names = append(names, f.name)
	}
	fmt.Fprintf(stdout, "wrote %s in %s; then:\n", strings.Join(names, " and "), *dir)
	if lang == "python" {
		out := filepath.Join(filepath.Dir(*dir), "clawhost-"+name)
		if !filepath.IsAbs(out) && !strings.HasPrefix(out, ".") {
			out = "./" + out // a path, not a command on $PATH
		}
		fmt.Fprintf(stdout, "  clawhost plugin package -python /usr/bin/python3 -o %s %s\n  clawhost plugin test %s%s\n", out, *dir, inject, out)
		fmt.Fprintln(stdout, "(-python: an interpreter with grpcio and protobuf, e.g. Debian's python3-grpcio and python3-protobuf)")
		return 0
	}
	fmt.Fprintf(stdout, "  cd %s && go mod tidy && go build && clawhost plugin test %s./clawhost-%s\n", *dir, inject, name)
	if *sdk == "" {
		fmt.Fprintln(stdout, "the sdk is not tagged yet: point go.mod at a clawhost checkout (replace directives), or run again with -sdk CHECKOUT")
	}
	return 0
}

// writeSkeleton makes dir (it must not exist) with files, the templates
// among them executed with data.
func writeSkeleton(dir string, files []skeletonFile, data skeletonData) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		b, err := renderSkeleton(f.src, data)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// renderSkeleton returns the file src under skeleton/, executed with data
// when it is a template.
func renderSkeleton(src string, data skeletonData) ([]byte, error) {
	if !strings.HasSuffix(src, ".tmpl") {
		return skeletons.ReadFile("skeleton/" + src)
	}
	t, err := template.New(src).Delims("[[", "]]").Option("missingkey=error").ParseFS(skeletons, "skeleton/"+src)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("skeleton %s: %w", src, err)
	}
	return b.Bytes(), nil
}
