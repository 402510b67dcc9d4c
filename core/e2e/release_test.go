package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// repoRoot is the checkout the e2e package is in.
const repoRoot = "../.."

// distLinux runs the release builder (make dist's core/cmd/dist) for
// linux/amd64 into a new directory and returns the archive's path.
func distLinux(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command("go", "run", "./core/cmd/dist", "-platforms", "linux/amd64", "-out", out)
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dist: %v\n%s", err, b)
	}
	archives, _ := filepath.Glob(filepath.Join(out, "clawhost_*_linux_amd64.tar.gz"))
	if len(archives) != 1 {
		t.Fatalf("dist made %v", archives)
	}
	return archives[0]
}

// untar unpacks the archive at path into dir and returns its entries.
func untar(t *testing.T, path, dir string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		} else if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, os.FileMode(h.Mode)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, os.FileMode(h.Mode)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReleaseArchive: make dist's linux/amd64 archive is the same bytes
// when built twice; unpacked in a directory of its own and run without
// make and without the checkout (another working directory, a PATH with no
// claude on it, no plugin_dir), clawhost finds its plugins next to itself
// and the claude CLI where claude's native installer puts it
// (~/.local/bin/claude), says so in its log, is healthy (claude answered
// its probe) and serves the web chat.
func TestReleaseArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release archive twice (~1 min): not under -short")
	}
	claude := clClaudeBin(t)
	first, second := distLinux(t), distLinux(t)
	a, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(first) != filepath.Base(second) || !bytes.Equal(a, b) {
		t.Fatalf("two builds differ: %s (%d bytes) and %s (%d bytes)", first, len(a), second, len(b))
	}
	sums, err := os.ReadFile(filepath.Join(filepath.Dir(first), "SHA256SUMS"))
	if err != nil || !strings.HasSuffix(string(sums), "  "+filepath.Base(first)+"\n") {
		t.Fatalf("SHA256SUMS: %q %v", sums, err)
	}

	installScript(t, first)

	root := t.TempDir()
	names := untar(t, first, filepath.Join(root, "opt"))
	top := strings.TrimSuffix(filepath.Base(first), ".tar.gz")
	for _, want := range []string{"clawhost", "clawhost-webchat", "clawhost-telegram", "clawhost-discord", "clawhost-whatsapp", "LICENSE", "README.md", "CHANGELOG.md", "config.hcl", "clawhost.binpb", "docs/install.md", "docs/slack.md"} {
		if !strings.Contains(strings.Join(names, "\n")+"\n", top+"/"+want+"\n") {
			t.Errorf("the archive lacks %s: %q", want, names)
		}
	}
	bin := filepath.Join(root, "opt", top, "clawhost")
	ver, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(ver), "clawhost ") || !strings.Contains(string(ver), "store schema sqlite ") || strings.Contains(string(ver), "unknown") {
		t.Errorf("clawhost version: %q %v", ver, err)
	}
	// clawhost.binpb is what the archive's clawhost writes for a Python
	// plugin author (clawhost plugin descriptor).
	desc, err := exec.Command(bin, "plugin", "descriptor").Output()
	if binpb, rerr := os.ReadFile(filepath.Join(root, "opt", top, "clawhost.binpb")); err != nil || rerr != nil || len(desc) == 0 || !bytes.Equal(binpb, desc) {
		t.Errorf("clawhost.binpb (%d bytes, %v) is not clawhost plugin descriptor's output (%d bytes, %v)", len(binpb), rerr, len(desc), err)
	}

	home := filepath.Join(root, "home")
	if err := os.MkdirAll(filepath.Join(home, ".local", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	native := filepath.Join(home, ".local", "bin", "claude")
	if err := os.Symlink(claude, native); err != nil {
		t.Fatal(err)
	}
	fake := anthropictest.New()
	t.Cleanup(fake.Close)
	web, adminAddr := sdktest.FreeAddr(t), sdktest.FreeAddr(t)
	etc := filepath.Join(root, "etc")
	if err := os.MkdirAll(etc, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(etc, "config.hcl")
	hcl := fmt.Sprintf(`data_dir = %q
agent {
  command   = "claude"
  workspace = %q
  env = {
    ANTHROPIC_BASE_URL = %q
    ANTHROPIC_API_KEY  = "test"
    DISABLE_AUTOUPDATER = "1"
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1"
  }
}
access {
  dm_policy  = "allowlist"
  allow_from = ["web:*"]
}
admin { listen = %q }
plugin "web" {
  source = "webchat"
  config { listen = %q }
}
`, filepath.Join(root, "data"), filepath.Join(root, "workspace"), fake.URL(), adminAddr, web)
	if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", cfg)
	cmd.Dir = root
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	log := Run(t, cmd)
	ok := func(url string) bool {
		c := http.Client{Timeout: time.Second}
		res, err := c.Get(url)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}
	sdktest.WaitFor(t, "the web chat's and the host's /healthz", func() error {
		w, a := ok("http://"+web+"/healthz"), ok("http://"+adminAddr+"/healthz")
		return sdktest.Saw(w && a, "the web chat %v, the host %v", w, a)
	})
	page, err := http.Get("http://" + web + "/")
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode == http.StatusNotFound || page.StatusCode >= 500 {
		t.Errorf("the web chat's page: %s", page.Status)
	}
	if want := "found=\"~/.local/bin (claude's native installer)\""; !strings.Contains(log.String(), want) || !strings.Contains(log.String(), "path="+native) {
		t.Errorf("the log does not say claude was found at %s: %s", native, want)
	}
}

// installScript: install.sh, pointed at a local web server holding make dist's output,
// downloads this machine's archive, checks it against SHA256SUMS and links clawhost into
// PREFIX/bin, where it runs and finds its plugins; served a corrupted archive it refuses
// and installs nothing.
func installScript(t *testing.T, archive string) {
	t.Helper()
	version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(archive), "clawhost_"), "_linux_amd64.tar.gz")
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Logf("install.sh not tried: the archive is linux/amd64, this is %s/%s", runtime.GOOS, runtime.GOARCH)
		return
	}
	serve := func(dir string) string {
		srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	install := func(url, prefix string) (string, error) {
		cmd := exec.Command("sh", filepath.Join(repoRoot, "install.sh"))
		cmd.Env = append(os.Environ(), "CLAWHOST_VERSION="+version, "CLAWHOST_RELEASE_URL="+url, "CLAWHOST_PREFIX="+prefix, "HOME="+prefix)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	good := filepath.Dir(archive)
	prefix := t.TempDir()
	if out, err := install(serve(good), prefix); err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	bin := filepath.Join(prefix, "bin", "clawhost")
	if ver, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(ver), "clawhost ") {
		t.Fatalf("the installed clawhost version: %q %v", ver, err)
	}
	if out, err := exec.Command(bin, "plugin", "schema", "telegram").CombinedOutput(); err != nil || !strings.Contains(string(out), "token") {
		t.Errorf("the installed clawhost does not find its plugins: %v\n%s", err, out)
	}

	bad := t.TempDir()
	for _, name := range []string{"SHA256SUMS", filepath.Base(archive)} {
		b, err := os.ReadFile(filepath.Join(good, name))
		if err != nil {
			t.Fatal(err)
		}
		if name != "SHA256SUMS" {
			b[len(b)/2] ^= 0xff
		}
		if err := os.WriteFile(filepath.Join(bad, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prefix2 := t.TempDir()
	out, err := install(serve(bad), prefix2)
	if err == nil || !strings.Contains(out, "checksum mismatch") {
		t.Fatalf("install.sh of a corrupted archive: %v\n%s", err, out)
	}
	if ents, _ := os.ReadDir(prefix2); len(ents) != 0 {
		t.Errorf("a refused install left %d entries in the prefix", len(ents))
	}
}
