package e2e

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestUpgradeByInstallScript: a v0.1.0 layout — clawhost and its plugins
// in ~/.local/lib/clawhost-0.1.0, the config.hcl init wrote naming that
// directory as plugin_dir, a user unit starting that clawhost — upgraded
// by install.sh: the new release sits beside the old one, the config's
// plugin_dir now leads to the new release's plugins, and the unit is
// reported. A config init writes after that names install.sh's link to
// the current release, so the next upgrade moves it without an edit.
func TestUpgradeByInstallScript(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("install.sh installs linux/amd64 archives here, this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	home := t.TempDir()
	prefix := filepath.Join(home, ".local")
	old := filepath.Join(prefix, "lib", "clawhost-0.1.0")
	for _, name := range []string{"clawhost", "clawhost-webchat"} {
		copyFile(t, filepath.Join(binDir(t), name), filepath.Join(old, name))
	}
	if err := os.MkdirAll(filepath.Join(prefix, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(old, "clawhost"), filepath.Join(prefix, "bin", "clawhost")); err != nil {
		t.Fatal(err)
	}
	cfgDir := filepath.Join(home, ".config", "clawhost")
	cfg := filepath.Join(cfgDir, "config.hcl")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(cfg, fmt.Sprintf("# written by clawhost init\ndata_dir = %q\nplugin_dir = %q\n\nplugin \"web\" {\n  source = \"webchat\"\n}\n", filepath.Join(home, "data"), old))
	unit := filepath.Join(home, ".config", "systemd", "user", "clawhost.service")
	write(unit, fmt.Sprintf("[Service]\nExecStart=%s run -config %s\n", filepath.Join(old, "clawhost"), cfg))

	releases := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(releases)))
	t.Cleanup(srv.Close)
	install := func(version string) string {
		t.Helper()
		fakeRelease(t, releases, version)
		cmd := exec.Command("sh", filepath.Join(repoRoot, "install.sh"))
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAWHOST_VERSION=" + version, "CLAWHOST_RELEASE_URL=" + srv.URL, "CLAWHOST_PREFIX=" + prefix}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("install.sh %s: %v\n%s", version, err, out)
		}
		return string(out)
	}
	pluginDir := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "plugin_dir = "); ok {
				return strings.Trim(v, `"`)
			}
		}
		t.Fatalf("%s names no plugin_dir:\n%s", path, b)
		return ""
	}
	resolves := func(what, path, want string) {
		t.Helper()
		if got, err := filepath.EvalSymlinks(path); err != nil || got != want {
			t.Errorf("%s %s leads to %q (%v), want %s", what, path, got, err, want)
		}
	}

	out := install("0.2.0")
	current := filepath.Join(prefix, "lib", "clawhost")
	if got := pluginDir(cfg); got != current {
		t.Errorf("after the upgrade plugin_dir is %q, want the link %s\n%s", got, current, out)
	}
	resolves("plugin_dir", current, filepath.Join(prefix, "lib", "clawhost-0.2.0"))
	resolves("clawhost on PATH", filepath.Join(prefix, "bin", "clawhost"), filepath.Join(prefix, "lib", "clawhost-0.2.0", "clawhost"))
	if _, err := os.Stat(filepath.Join(old, "clawhost-webchat")); err != nil {
		t.Errorf("the old release is gone: %v", err)
	}
	if !strings.Contains(out, unit+" starts an older release: run clawhost service install -force") {
		t.Errorf("the old unit is not reported:\n%s", out)
	}
	if fi, err := os.Stat(cfg); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config.hcl after the edit: %v %v", fi.Mode(), err)
	}

	// A configuration install.sh does not edit (another place) still
	// names the old release: doctor warns.
	pinned := filepath.Join(home, "etc", "config.hcl")
	write(pinned, fmt.Sprintf("data_dir = %q\nplugin_dir = %q\nagent {\n  command = \"/bin/true\"\n  sandbox = \"off\"\n}\nadmin { listen = %q }\n\nplugin \"web\" {\n  source = \"webchat\"\n  config { listen = %q }\n}\n",
		filepath.Join(home, "data"), old, sdktest.FreeAddr(t), sdktest.FreeAddr(t)))
	doctor := exec.Command(filepath.Join(prefix, "bin", "clawhost"), "doctor", "-json", "-config", pinned)
	doctor.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	report, _ := doctor.Output() // other checks fail here (no claude): only the plugin's is looked at
	var checks []struct{ Name, Verdict, Found, Do string }
	if err := json.Unmarshal(report, &checks); err != nil {
		t.Fatalf("doctor -json: %v\n%s", err, report)
	}
	warned := false
	for _, c := range checks {
		warned = warned || c.Name == `plugin "web"` && c.Verdict == "warn" && strings.Contains(c.Found, "is clawhost 0.1.0's plugin; this clawhost is 0.2.0") &&
			strings.Contains(c.Do, fmt.Sprintf("plugin_dir = %q", current))
	}
	if !warned {
		t.Errorf("doctor does not warn about the old release's plugin: %+v", checks)
	}
	// So does the host's log when it starts with it.
	host := exec.Command(filepath.Join(prefix, "bin", "clawhost"), "run", "-config", pinned)
	host.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	log := Run(t, host)
	sdktest.WaitFor(t, "the warning about the old release's plugin", func() bool {
		return strings.Contains(log.String(), "plugin is of another release than this clawhost") &&
			strings.Contains(log.String(), "release=0.1.0 clawhost=0.2.0")
	})

	// init run by the installed clawhost names the link.
	fresh := filepath.Join(home, "fresh")
	initCmd := exec.Command(filepath.Join(prefix, "bin", "clawhost"), "init", "-non-interactive", "-webchat", "-claude", "/bin/true",
		"-config-dir", fresh, "-data-dir", filepath.Join(fresh, "data"), "-workspace", filepath.Join(fresh, "ws"),
		"-admin-listen", sdktest.FreeAddr(t), "-webchat-listen", sdktest.FreeAddr(t))
	initCmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	if got := pluginDir(filepath.Join(fresh, "config.hcl")); got != current {
		t.Errorf("init wrote plugin_dir %q, want the link %s", got, current)
	}

	install("0.3.0")
	if got := pluginDir(cfg); got != current {
		t.Errorf("after the second upgrade plugin_dir is %q", got)
	}
	resolves("plugin_dir", current, filepath.Join(prefix, "lib", "clawhost-0.3.0"))
}

// fakeRelease writes into dir what make dist publishes for version on
// linux/amd64 — clawhost_<version>_linux_amd64.tar.gz holding clawhost and
// the web chat plugin of this build, and its line in SHA256SUMS — enough
// for install.sh.
func fakeRelease(t *testing.T, dir, version string) {
	t.Helper()
	top := "clawhost_" + version + "_linux_amd64"
	archive := filepath.Join(dir, top+".tar.gz")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, name := range []string{"clawhost", "clawhost-webchat"} {
		b, err := os.ReadFile(filepath.Join(binDir(t), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + name, Mode: 0o755, Size: int64(len(b))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, gz, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.OpenFile(filepath.Join(dir, "SHA256SUMS"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(sums, "%x  %s\n", sha256.Sum256(b), filepath.Base(archive)); err != nil {
		t.Fatal(err)
	}
	if err := sums.Close(); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies an executable from to to, making to's directory.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	sdktest.WriteExecutable(t, to, b, 0o755)
}

// TestInstallFromLocalDist: install.sh installs one's own make dist from
// its directory (CLAWHOST_DIST), checked against its SHA256SUMS like a
// download, the version read from SHA256SUMS when it lists one for this
// machine; several need CLAWHOST_VERSION, a directory without SHA256SUMS
// and a corrupted archive are refused.
func TestInstallFromLocalDist(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("install.sh installs linux/amd64 archives here, this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	install := func(dist, version string) (string, string, error) {
		home := t.TempDir()
		cmd := exec.Command("sh", filepath.Join(repoRoot, "install.sh"))
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAWHOST_DIST=" + dist}
		if version != "" {
			cmd.Env = append(cmd.Env, "CLAWHOST_VERSION="+version)
		}
		out, err := cmd.CombinedOutput()
		return home, string(out), err
	}
	one := t.TempDir()
	fakeRelease(t, one, "4071ba7-dirty")
	home, out, err := install(one, "")
	if err != nil {
		t.Fatalf("install.sh from %s: %v\n%s", one, err, out)
	}
	bin := filepath.Join(home, ".local", "bin", "clawhost")
	if got, err := filepath.EvalSymlinks(bin); err != nil || got != filepath.Join(home, ".local", "lib", "clawhost-4071ba7-dirty", "clawhost") {
		t.Errorf("%s leads to %q (%v)", bin, got, err)
	}
	if v, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(v), "clawhost ") {
		t.Errorf("the installed clawhost: %q %v", v, err)
	}

	two := t.TempDir()
	fakeRelease(t, two, "0.2.0")
	fakeRelease(t, two, "0.3.0")
	if _, out, err := install(two, ""); err == nil || !strings.Contains(out, "lists several versions (0.2.0 0.3.0): say which with CLAWHOST_VERSION") {
		t.Errorf("two versions without CLAWHOST_VERSION: %v\n%s", err, out)
	}
	if home, out, err := install(two, "0.3.0"); err != nil {
		t.Errorf("CLAWHOST_VERSION=0.3.0: %v\n%s", err, out)
	} else if _, err := os.Stat(filepath.Join(home, ".local", "lib", "clawhost-0.3.0", "clawhost-webchat")); err != nil {
		t.Errorf("0.3.0 not installed: %v", err)
	}

	if _, out, err := install(t.TempDir(), ""); err == nil || !strings.Contains(out, "holds no SHA256SUMS") {
		t.Errorf("a directory without SHA256SUMS: %v\n%s", err, out)
	}
	bad := t.TempDir()
	fakeRelease(t, bad, "0.4.0")
	archive := filepath.Join(bad, "clawhost_0.4.0_linux_amd64.tar.gz")
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(archive, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if home, out, err := install(bad, ""); err == nil || !strings.Contains(out, "checksum mismatch") {
		t.Errorf("a corrupted archive: %v\n%s", err, out)
	} else if _, err := os.Stat(filepath.Join(home, ".local", "bin", "clawhost")); err == nil {
		t.Error("a refused archive was installed")
	}
}
