package cli

import (
	"archive/zip"
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// PythonDescriptor is the name of the protocol's descriptor set inside a
// packaged Python plugin, where the runtime clawhost_plugin.py
// (load_descriptor) looks for it when $CLAWHOST_PROTO_DESCRIPTOR is unset.
const PythonDescriptor = "clawhost.binpb"

// pluginPackage is `clawhost plugin package [-o OUT] [-python PATH] DIR`:
// a Python plugin directory (with __main__.py) becomes one executable
// file, a zipapp of its .py files and the protocol's descriptor set, as
// python3 -m zipapp makes them (a "#!" line, then the zip).
func pluginPackage(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clawhost plugin package", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the file to write (default ./clawhost-<DIR's name>)")
	python := fs.String("python", "/usr/bin/env python3", "the interpreter of the #! line (one with grpcio and protobuf)")
	if code, ok := parseFlags(fs, args, "", stdout, stderr, "plugin package"); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "clawhost plugin package: want one DIR, the plugin's directory with __main__.py")
		return 2
	}
	dir := fs.Arg(0)
	if *out == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			fmt.Fprintf(stderr, "clawhost plugin package: %v\n", err)
			return 1
		}
		*out = "clawhost-" + filepath.Base(abs)
	}
	if err := packagePython(dir, *out, *python); err != nil {
		fmt.Fprintf(stderr, "clawhost plugin package: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return 0
}

// PythonRuntime is the Python runtime's file name: the one copy is this
// binary's (core/cli/skeleton), which `plugin new` writes into a new
// plugin and `plugin package` adds to a plugin that has none of its own
// (examples/python-echo keeps none).
const PythonRuntime = "clawhost_plugin.py"

// packagePython writes the zipapp of dir to out (0755, replaced whole):
// "#!" + python, then a zip of dir's .py files (not its subdirectories),
// the runtime PythonRuntime when dir has none, and PythonDescriptor.
func packagePython(dir, out, python string) (err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".py") {
			files = append(files, e.Name())
		}
	}
	if !slices.Contains(files, "__main__.py") {
		return fmt.Errorf("%s has no __main__.py: python runs a zipapp from it", dir)
	}
	desc, err := DescriptorSet()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".clawhost-package-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriter(tmp)
	head := "#!" + python + "\n"
	if _, err := w.WriteString(head); err != nil {
		return err
	}
	z := zip.NewWriter(w)
	z.SetOffset(int64(len(head))) // the zip's offsets count from the file's start
	add := func(name string, data []byte) error {
		f, err := z.Create(name)
		if err == nil {
			_, err = f.Write(data)
		}
		return err
	}
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := add(name, data); err != nil {
			return err
		}
	}
	if !slices.Contains(files, PythonRuntime) {
		runtime, err := renderSkeleton(PythonRuntime, skeletonData{})
		if err != nil {
			return err
		}
		if err := add(PythonRuntime, runtime); err != nil {
			return err
		}
	}
	if err := add(PythonDescriptor, desc); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}
