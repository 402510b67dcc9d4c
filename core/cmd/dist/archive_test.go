package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestArchiveIsDeterministic: one set of inputs gives one set of bytes,
// whatever order the files come in and whatever their times and owners on
// disk; the entries are sorted, 0:0, dated at the commit, with the modes
// given, and the gzip header has no name and no time.
func TestArchiveIsDeterministic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var files []file
	for i, n := range []string{"clawhost", "README.md", "docs/releases/v0.9.0.md", "clawhost-webchat", "docs/install.md", "LICENSE"} {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("content of "+filepath.Base(n)), 0o600); err != nil {
			t.Fatal(err)
		}
		mode := int64(0o644)
		if strings.HasPrefix(n, "clawhost") {
			mode = 0o755
		}
		files = append(files, file{name: n, src: p, mode: mode})
		// A different time on disk per file: the archive must not see it.
		if err := os.Chtimes(p, time.Now(), time.Now().Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	commit := time.Date(2026, 11, 25, 6, 10, 40, 0, time.UTC)
	var a, b bytes.Buffer
	if err := writeArchive(&a, "clawhost_0.9.0_linux_amd64", files, commit); err != nil {
		t.Fatal(err)
	}
	reversed := slices.Clone(files)
	slices.Reverse(reversed)
	if err := os.Chtimes(files[0].src, time.Now(), time.Now().Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := writeArchive(&b, "clawhost_0.9.0_linux_amd64", reversed, commit); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two archives of the same files differ")
	}

	gz, err := gzip.NewReader(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header name %q time %v, want none", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(commit) {
			t.Errorf("%s: owner %d:%d (%q:%q), time %v", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		want := int64(0o644)
		if h.Typeflag == tar.TypeDir || strings.Contains(h.Name, "/clawhost") {
			want = 0o755
		}
		if h.Mode != want {
			t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, want)
		}
		if h.Typeflag == tar.TypeReg {
			body, _ := io.ReadAll(tr)
			if string(body) != "content of "+filepath.Base(h.Name) {
				t.Errorf("%s holds %q", h.Name, body)
			}
		}
	}
	want := "clawhost_0.9.0_linux_amd64/ clawhost_0.9.0_linux_amd64/LICENSE clawhost_0.9.0_linux_amd64/README.md " +
		"clawhost_0.9.0_linux_amd64/clawhost clawhost_0.9.0_linux_amd64/clawhost-webchat " +
		"clawhost_0.9.0_linux_amd64/docs/ clawhost_0.9.0_linux_amd64/docs/install.md " +
		"clawhost_0.9.0_linux_amd64/docs/releases/ clawhost_0.9.0_linux_amd64/docs/releases/v0.9.0.md"
	if strings.Join(got, " ") != want {
		t.Errorf("entries %q\nwant    %q", strings.Join(got, " "), want)
	}
}

// TestSums: SHA256SUMS lists each archive once, sorted, in sha256sum's
// format.
func TestSums(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"b.tar.gz", "a.tar.gz"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeSums(dir, []string{"b.tar.gz", "a.tar.gz"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	// echo -n a.tar.gz | sha256sum
	if len(lines) != 2 || lines[0] != "0a67bba7da46793c9f1908a7eec3d06a11ba7bc00bf749c31bb134f4f45ebcad  a.tar.gz" ||
		!strings.HasSuffix(lines[1], "  b.tar.gz") || len(lines[1]) != 64+2+len("b.tar.gz") {
		t.Fatalf("SHA256SUMS:\n%s", got)
	}
}

// TestBadPlatform: a platform that is not GOOS/GOARCH is a usage error.
func TestBadPlatform(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if code := run(t.Context(), []string{"-C", "../../..", "-out", t.TempDir(), "-platforms", "linux"}, io.Discard, &stderr); code != 2 {
		t.Fatalf("exit %d, %s", code, stderr.String())
	}
}

// TestDocFiles: the archive's documentation is every page under docs/ of
// the checkout (the release notes too), by the path README's links use.
func TestDocFiles(t *testing.T) {
	t.Parallel()
	got, err := docFiles("../../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"docs/index.md", "docs/install.md", "docs/slack.md", "docs/releases/v0.1.0.md"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not among %q", want, got)
		}
	}
	for _, p := range got {
		if !strings.HasPrefix(p, "docs/") || !strings.HasSuffix(p, ".md") {
			t.Errorf("%s is not a page of docs/", p)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("not sorted: %q", got)
	}
}
