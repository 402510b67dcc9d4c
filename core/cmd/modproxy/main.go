// Command modproxy serves the repository's own modules (those go.work uses:
// the daemon, the sdk and the protocol) from the working tree as a Go
// module proxy, the way they would be served once tagged.
//
// The go.mod files require each other at released versions
// (github.com/clawhost/clawhost/sdk v0.1.0), without replace directives, so
// that `go install github.com/clawhost/clawhost/core/cmd/clawhost@vX.Y.Z`
// works; inside the checkout go.work points those versions at the
// directories. Two things ignore go.work and need the versions themselves:
// `go mod tidy`, and a check that the install from the module path works.
// modproxy gives them a proxy (GOPROXY's file:// layout) built from the
// tree.
//
//	go run ./core/cmd/modproxy -out DIR [-version vX.Y.Z]
//	    writes the proxy: each module at every version another one
//	    requires, and at -version too (the daemon's module, which nothing
//	    requires, only then).
//	go run ./core/cmd/modproxy -tidy [-diff]
//	    runs go mod tidy on each module against such a proxy (make tidy);
//	    -diff changes nothing and exits 1 when a go.mod or go.sum is not
//	    tidy (make check). go.sum files never hold the repository's own
//	    modules: their sums change with every edit of the tree.
//
// Both use a module cache of their own (-modcache, default
// .cache/modproxy/modcache in the checkout), from which the repository's
// modules are removed at each run: the tree's versions must not land in the
// machine's module cache, where they would stand for the released ones.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"golang.org/x/mod/module"
)

// defaultModcache is the module cache of -tidy, in the checkout.
var defaultModcache = filepath.Join(".cache", "modproxy", "modcache")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command with its arguments; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("modproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("C", ".", "the checkout (the directory of go.work)")
	out := fs.String("out", "", "write the proxy into this directory")
	release := fs.String("version", "", "serve every module at this version too (e.g. v0.1.0)")
	tidy := fs.Bool("tidy", false, "run go mod tidy on every module against the proxy")
	diff := fs.Bool("diff", false, "with -tidy: change nothing, print what is not tidy and exit 1")
	modcache := fs.String("modcache", "", "the module cache -tidy uses (default .cache/modproxy/modcache in the checkout)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || (*out == "") == !*tidy {
		fmt.Fprintln(stderr, "usage: modproxy -out DIR [-version vX.Y.Z] | -tidy [-diff]")
		return 2
	}
	root, err := filepath.Abs(*repo)
	if err != nil {
		fmt.Fprintf(stderr, "modproxy: %v\n", err)
		return 1
	}
	if *out != "" {
		if _, err := writeProxy(ctx, root, *out, *release); err != nil {
			fmt.Fprintf(stderr, "modproxy: %v\n", err)
			return 1
		}
		return 0
	}
	if *modcache == "" {
		*modcache = filepath.Join(root, defaultModcache)
	}
	clean, err := tidyAll(ctx, root, *modcache, *release, *diff, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "modproxy: %v\n", err)
		return 1
	}
	if !clean && *diff {
		fmt.Fprintln(stdout, "run make tidy")
		return 1
	}
	return 0
}

// tidyAll tidies every module of the workspace at root (see tidyModule)
// against a proxy of the tree in a temporary directory, with modcache as
// the module cache. It reports whether every module was already tidy.
func tidyAll(ctx context.Context, root, modcache, release string, check bool, w io.Writer) (bool, error) {
	proxy, err := os.MkdirTemp("", "modproxy-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(proxy)
	mods, err := writeProxy(ctx, root, proxy, release)
	if err != nil {
		return false, err
	}
	if err := forgetOwn(modcache, mods); err != nil {
		return false, err
	}
	defer forgetOwn(modcache, mods) //nolint:errcheck // the next run clears them too
	env, err := moduleEnv(ctx, proxy, modcache, mods)
	if err != nil {
		return false, err
	}
	clean := true
	for _, m := range mods {
		ok, err := tidyModule(ctx, m, mods, env, check, w)
		if err != nil {
			return false, err
		}
		clean = clean && ok
	}
	return clean, nil
}

// forgetOwn removes the workspace's modules from the module cache at
// modcache (extracted and downloaded), so that the next run takes them
// from the proxy again.
func forgetOwn(modcache string, mods []workModule) error {
	for _, m := range mods {
		esc, err := module.EscapePath(m.path)
		if err != nil {
			return err
		}
		for _, v := range m.versions {
			for _, dir := range []string{
				filepath.Join(modcache, filepath.FromSlash(esc)+"@"+v),
				filepath.Join(modcache, "cache", "download", filepath.FromSlash(esc), "@v"),
			} {
				if err := os.RemoveAll(dir); err != nil {
					return fmt.Errorf("clear module cache: %w", err)
				}
			}
		}
	}
	return nil
}
