// Command dist builds clawhost's release archives (make dist): for each
// platform, the host and the first-party plugins (plugins/*/cmd/clawhost-*)
// as static binaries (on Linux also clawhost-sandbox, the recycled
// sandboxes' helper), packed with LICENSE, README.md, CHANGELOG.md, the
// documentation (docs/) and the annotated config.hcl (and clawhost.binpb, the protocol's descriptor set
// for plugin authors) into dist/clawhost_<version>_<os>_<arch>.tar.gz, and
// dist/SHA256SUMS over the archives.
//
// The archives are reproducible: two runs on one commit with one Go
// toolchain give the same bytes. The version, commit and date come from git
// (the date is the commit's, not the clock's); the binaries are built with
// -trimpath and an empty build id; the tar entries are sorted, owned by
// 0:0, dated at the commit, with fixed modes; the gzip header carries no
// name and no time.
//
//	go run ./core/cmd/dist [-C DIR] [-out DIR] [-platforms linux/amd64,...] [-version V]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clawhost/clawhost/core/cli"
)

// platforms are the release targets (-platforms default).
var platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// docs are the files of the checkout each archive carries, beside the
// binaries; the documentation (docsDir's *.md, at any depth) goes with
// them, under docs/.
var docs = []string{"LICENSE", "README.md", "CHANGELOG.md", "config.hcl"}

// docsDir is the documentation's directory in the checkout and in the
// archive.
const docsDir = "docs"

// docFiles are the documentation's pages in repo, as archive paths
// ("docs/install.md"), sorted.
func docFiles(repo string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(filepath.Join(repo, docsDir), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".md") {
			return err
		}
		rel, err := filepath.Rel(repo, path)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find the documentation: %w", err)
	}
	slices.Sort(out)
	return out, nil
}

// DescriptorFile is the archive's copy of `clawhost plugin descriptor`.
const DescriptorFile = "clawhost.binpb"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command with its arguments; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dist", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("C", ".", "the checkout to build (the module root)")
	out := fs.String("out", "dist", "where the archives and SHA256SUMS go")
	plats := fs.String("platforms", strings.Join(platforms, ","), "comma-separated GOOS/GOARCH pairs")
	version := fs.String("version", "", "the release's version (default: from git: the v* tag without its v, else the commit)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "dist: unexpected arguments %q\n", fs.Args())
		return 2
	}
	st, err := stampOf(ctx, *repo)
	if err != nil {
		fmt.Fprintf(stderr, "dist: %v\n", err)
		return 1
	}
	if *version != "" {
		st.Version = *version
	}
	var targets []platform
	for _, p := range strings.Split(*plats, ",") {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || goos == "" || goarch == "" {
			fmt.Fprintf(stderr, "dist: platform %q is not GOOS/GOARCH\n", p)
			return 2
		}
		targets = append(targets, platform{goos, goarch})
	}
	r := release{repo: *repo, out: *out, stamp: st, log: stdout}
	if err := r.build(ctx, targets); err != nil {
		fmt.Fprintf(stderr, "dist: %v\n", err)
		return 1
	}
	return 0
}

// platform is one GOOS/GOARCH target.
type platform struct{ goos, goarch string }

func (p platform) String() string { return p.goos + "_" + p.goarch }

// release builds the archives of one stamp.
type release struct {
	repo, out string
	stamp     stamp
	log       io.Writer
}

// build writes one archive per target and SHA256SUMS over all of them.
func (r release) build(ctx context.Context, targets []platform) error {
	if err := os.MkdirAll(r.out, 0o755); err != nil {
		return fmt.Errorf("make %s: %w", r.out, err)
	}
	cmds, err := filepath.Glob(filepath.Join(r.repo, "plugins", "*", "cmd", "clawhost-*"))
	if err != nil || len(cmds) == 0 {
		return fmt.Errorf("find the plugins: none under %s", filepath.Join(r.repo, "plugins/*/cmd"))
	}
	pkgs := []string{"./core/cmd/clawhost"}
	for _, c := range cmds {
		rel, err := filepath.Rel(r.repo, c)
		if err != nil {
			return fmt.Errorf("find the plugins: %w", err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(rel))
	}
	var names []string
	for _, t := range targets {
		pkgs := pkgs
		if t.goos == "linux" {
			// The recycled sandboxes' helper (core/sandbox's Pool): bubblewrap, and so the helper, is Linux's.
			pkgs = append(slices.Clone(pkgs), "./core/cmd/clawhost-sandbox")
		}
		name, err := r.archive(ctx, t, pkgs)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		names = append(names, name)
	}
	return writeSums(r.out, names)
}

// archive builds the binaries of one target into a staging directory and
// packs them; it returns the archive's file name.
func (r release) archive(ctx context.Context, t platform, pkgs []string) (string, error) {
	stage, err := os.MkdirTemp("", "clawhost-dist-")
	if err != nil {
		return "", fmt.Errorf("stage: %w", err)
	}
	defer os.RemoveAll(stage)
	fmt.Fprintf(r.log, "dist: building %s for %s\n", strings.Join(pkgs, " "), t)
	if err := goBuild(ctx, r.repo, t, r.stamp, stage, pkgs); err != nil {
		return "", err
	}
	top := fmt.Sprintf("clawhost_%s_%s", r.stamp.Version, t)
	var files []file
	for _, p := range pkgs {
		bin := filepath.Base(p)
		files = append(files, file{name: bin, src: filepath.Join(stage, bin), mode: 0o755})
	}
	pages, err := docFiles(r.repo)
	if err != nil {
		return "", err
	}
	for _, d := range append(slices.Clone(docs), pages...) {
		files = append(files, file{name: d, src: filepath.Join(r.repo, filepath.FromSlash(d)), mode: 0o644})
	}
	// The protocol's descriptor set, as `clawhost plugin descriptor` writes
	// it, for plugin authors in other languages (one for every platform:
	// a darwin clawhost cannot run here to write it).
	desc, err := cli.DescriptorSet()
	if err != nil {
		return "", fmt.Errorf("descriptor set: %w", err)
	}
	binpb := filepath.Join(stage, DescriptorFile)
	if err := os.WriteFile(binpb, desc, 0o644); err != nil {
		return "", fmt.Errorf("descriptor set: %w", err)
	}
	files = append(files, file{name: DescriptorFile, src: binpb, mode: 0o644})
	name := top + ".tar.gz"
	path := filepath.Join(r.out, name)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", tmp, err)
	}
	if err := writeArchive(f, top, files, r.stamp.Time); err != nil {
		f.Close()
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	fmt.Fprintf(r.log, "dist: %s\n", path)
	return name, nil
}
