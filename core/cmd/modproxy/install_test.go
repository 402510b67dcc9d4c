package main

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const root = "../../.."

// TestGoInstallFromModulePath installs the daemon the way a user without a
// checkout would — go install github.com/clawhost/clawhost/core/cmd/clawhost@v0.1.0
// outside any module — from a proxy of this tree (the release tagged now)
// and the machine's module cache, without network, and runs it: go.mod
// files without replace directives whose nested modules resolve at the
// versions they require.
func TestGoInstallFromModulePath(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	proxy, gobin, outside := t.TempDir(), t.TempDir(), t.TempDir()
	mods, err := writeProxy(ctx, root, proxy, "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	// The module cache make tidy uses: the third-party modules are
	// extracted there once (a fresh one took minutes); the tree's own are
	// removed first.
	modcache, err := filepath.Abs(filepath.Join(root, defaultModcache))
	if err != nil {
		t.Fatal(err)
	}
	if err := forgetOwn(modcache, mods); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = forgetOwn(modcache, mods) })
	env, err := moduleEnv(ctx, proxy, modcache, mods)
	if err != nil {
		t.Fatal(err)
	}
	machineCache, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env = append(env,
		// Only loopback-free sources: the tree's proxy and the machine's
		// module cache, which holds every third-party module already.
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(strings.TrimSpace(string(machineCache)), "cache", "download")),
		"GOSUMDB=off",
		// The tree's modules at a version another run zipped before: the
		// module index in the shared build cache would answer from that zip.
		"GODEBUG=goindex=0",
		// make build's flags: the third-party packages it compiled are
		// in the build cache.
		"GOFLAGS=-modcacherw -trimpath -tags=grpcnotrace",
		"CGO_ENABLED=0",
		"GOBIN="+gobin,
	)
	cmd := exec.CommandContext(ctx, "go", "install", "github.com/clawhost/clawhost/core/cmd/clawhost@v0.1.0")
	cmd.Dir, cmd.Env = outside, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, filepath.Join(gobin, "clawhost"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("clawhost version: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "clawhost v0.1.0 ") {
		t.Errorf("clawhost version = %q, want the module's version v0.1.0", out)
	}
}

// TestProxyServesTheTree checks the proxy's layout and that each module's
// zip holds its own files only (a nested module's are in its own zip).
func TestProxyServesTheTree(t *testing.T) {
	dir := t.TempDir()
	mods, err := writeProxy(t.Context(), root, dir, "v0.9.9")
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]workModule{}
	for _, m := range mods {
		byPath[m.path] = m
	}
	for _, tc := range []struct {
		path, has, hasNot string
	}{
		{"github.com/clawhost/clawhost", "core/cmd/clawhost/main.go", "sdk/sdk.go"},
		{"github.com/clawhost/clawhost/sdk", "sdk.go", "gen/clawhost/v1/plugin.pb.go"},
		{"github.com/clawhost/clawhost/proto", "gen/clawhost/v1/plugin.pb.go", "sdk.go"},
	} {
		m, ok := byPath[tc.path]
		if !ok {
			t.Fatalf("go.work has no module %s", tc.path)
		}
		vdir := filepath.Join(dir, filepath.FromSlash(tc.path), "@v")
		list, err := os.ReadFile(filepath.Join(vdir, "list"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(list), "v0.9.9\n") {
			t.Errorf("%s: list %q lacks the release version", tc.path, list)
		}
		mod, err := os.ReadFile(filepath.Join(vdir, "v0.9.9.mod"))
		if want, _ := os.ReadFile(filepath.Join(m.dir, "go.mod")); err != nil || !bytes.Equal(mod, want) {
			t.Errorf("%s: v0.9.9.mod is not the tree's go.mod (%v)", tc.path, err)
		}
		zr, err := zip.OpenReader(filepath.Join(vdir, "v0.9.9.zip"))
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, f := range zr.File {
			names[f.Name] = true
		}
		zr.Close()
		prefix := tc.path + "@v0.9.9/"
		if !names[prefix+tc.has] || names[prefix+tc.hasNot] {
			t.Errorf("%s zip: has %s = %v (want true), has %s = %v (want false)", tc.path, tc.has, names[prefix+tc.has], tc.hasNot, names[prefix+tc.hasNot])
		}
	}
	// The sdk is also served at the version the daemon's go.mod requires.
	if v := byPath["github.com/clawhost/clawhost/sdk"].versions; len(v) < 2 {
		t.Errorf("sdk versions %q: want the required one and v0.9.9", v)
	}
}
