package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginNew: `clawhost plugin new go|python channel|hook|tool NAME`
// writes a plugin that builds (Go) or is packaged by `clawhost plugin
// package` (Python) and passes `clawhost plugin test` as written, the
// channels with the -inject command their doc comments give. The Go build
// runs in a Go workspace with this checkout's modules (the machine has no
// module proxy: the checkout's versions are the ones cached); an author
// runs go mod tidy instead. Python needs Debian's python3-grpcio: without
// it the Python cases skip, unless CLAWHOST_REQUIRE_PYTHON=1 (make test).
func TestPluginNew(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"ruby", "tool", "x"}, {"go", "command", "x"}, {"python", "bot", "x"}, {"go", "tool", "Bad_Name"}, {"python", "tool", "x_y"}} {
		var out, errb bytes.Buffer
		if code := Main(append([]string{"plugin", "new", "-dir", filepath.Join(t.TempDir(), "x")}, bad...), nil, &out, &errb); code != 2 {
			t.Errorf("plugin new %s: exit %d, want 2 (%s)", strings.Join(bad, " "), code, errb.String())
		}
	}
	for _, tc := range []struct{ lang, kind string }{
		{"go", "channel"}, {"go", "hook"}, {"go", "tool"},
		{"python", "channel"}, {"python", "hook"}, {"python", "tool"},
	} {
		t.Run(tc.lang+"-"+tc.kind, func(t *testing.T) {
			t.Parallel()
			name := "my" + tc.kind
			dir := t.TempDir()
			src := filepath.Join(dir, name)
			args := []string{"plugin", "new", "-dir", src, tc.lang, tc.kind, name}
			var bin string
			switch tc.lang {
			case "go":
				needGo(t)
				args = []string{"plugin", "new", "-dir", src, "-sdk", root, tc.lang, tc.kind, name}
			case "python":
				needPython(t)
			}
			var out, errb bytes.Buffer
			if code := Main(args, nil, &out, &errb); code != 0 {
				t.Fatalf("plugin new: exit %d: %s", code, errb.String())
			}
			switch tc.lang {
			case "go":
				bin = buildGoSkeleton(t, root, dir, src, name)
			case "python":
				bin = filepath.Join(dir, "clawhost-"+name)
				out.Reset()
				errb.Reset()
				if code := Main([]string{"plugin", "package", "-python", "/usr/bin/python3", "-o", bin, src}, nil, &out, &errb); code != 0 {
					t.Fatalf("plugin package: exit %d: %s", code, errb.String())
				}
			}
			test := []string{"plugin", "test", bin}
			if tc.kind == "channel" {
				test = []string{"plugin", "test", "-inject", spoolInject, bin}
			}
			out.Reset()
			errb.Reset()
			code := Main(test, nil, &out, &errb)
			// Every check runs: the channels' inbound ones too.
			if code != 0 || !strings.Contains(out.String(), " 0 failed, 0 skipped") {
				t.Errorf("plugin test: exit %d\n%s\n%s", code, out.String(), errb.String())
			}
		})
	}
}

// TestSkeletonsMatchExamples: the skeletons copied from examples are the
// examples still: channel.go.tmpl rendered for "channel-template" is
// examples/channel-template/main.go. A change to one is made to the other.
// (The Python runtime has one copy, the skeleton's: `plugin package` adds
// it to examples/python-echo.)
func TestSkeletonsMatchExamples(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src, example string
		data         skeletonData
	}{
		{"channel.go.tmpl", "../../examples/channel-template/main.go", skeletonData{Name: "channel-template", Path: "bin/clawhost-channel-template"}},
	} {
		got, err := renderSkeleton(tc.src, tc.data)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(tc.example)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("skeleton/%s differs from %s: copy the change across", tc.src, tc.example)
		}
	}
}

// needGo skips a test without go on PATH.
func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
}

// needPython skips a test without Debian's python3-grpcio and
// python3-protobuf, unless CLAWHOST_REQUIRE_PYTHON=1 makes that a failure.
func needPython(t *testing.T) {
	t.Helper()
	out, err := exec.Command("/usr/bin/python3", "-c", "import grpc, google.protobuf").CombinedOutput()
	if err == nil {
		return
	}
	if os.Getenv("CLAWHOST_REQUIRE_PYTHON") == "1" {
		t.Fatalf("Debian's python3-grpcio and python3-protobuf are missing (make deps): %v: %s", err, out)
	}
	t.Skipf("Debian's python3-grpcio and python3-protobuf are missing (make deps; CLAWHOST_REQUIRE_PYTHON=1 makes this a failure): %v: %s", err, out)
}

// buildGoSkeleton builds the module src written by plugin new in a Go
// workspace (dir/go.work) of it and this checkout's modules, offline, and
// returns the binary.
func buildGoSkeleton(t *testing.T, root, dir, src, name string) string {
	t.Helper()
	work := "go 1.26.8\n\nuse (\n\t" + src + "\n\t" + root + "\n\t" + filepath.Join(root, "sdk") + "\n\t" +
		filepath.Join(root, "proto") + "\n\t" + filepath.Join(root, "markup") + "\n)\n"
	if err := os.WriteFile(filepath.Join(dir, "go.work"), []byte(work), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.work.sum")); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "go.work.sum"), b, 0o644)
	}
	bin := filepath.Join(src, "clawhost-"+name)
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work"), "GOPROXY=off", "GOFLAGS=-buildvcs=false")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return bin
}
