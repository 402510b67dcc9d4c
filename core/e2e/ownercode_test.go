package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestOwnerCodeAtFirstStart: a host nobody ran `clawhost init` for (a container) and with
// no owner logs a one-time "/owner CODE" at its start; the sender of that message becomes
// the owner; a restart while a code is pending logs none (init's code stays valid), one
// with an owner neither; `clawhost owner-code` makes a new one.
func TestOwnerCodeAtFirstStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := loopbackHost(dir, false)
	h.Access = Attrs{"dm_policy": "pairing"}
	cfg := h.Write(t)
	d := Launch(t, cfg)
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitServing()
	codeRE := regexp.MustCompile(`no owner yet: .*message="/owner ([A-Z0-9]{8})"`)
	d.waitFor(func() bool { return codeRE.MatchString(d.Log()) }, "the owner code in the log")
	code := codeRE.FindStringSubmatch(d.Log())[1]

	// A restart with the code still pending makes no new one.
	_ = d.Process().Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	_ = os.Remove(d.addrFile)
	d.spawn()
	d.waitFor(func() bool { return strings.Contains(d.Log(), "an owner code is pending") }, "the pending code noted")
	if n := len(codeRE.FindAllString(d.Log(), -1)); n != 0 {
		t.Fatalf("a restart with a pending code made a new one (%d in this start's log)", n)
	}
	d.waitServing()

	d.post("u9", "/owner "+code)
	if got := d.nextSend("chat-u9"); !strings.Contains(strings.ToLower(got), "owner") {
		t.Fatalf("the answer to /owner: %q", got)
	}
	b, err := os.ReadFile(filepath.Join(dir, "data", "owners.json"))
	if err != nil || !strings.Contains(string(b), `"lo:u9"`) {
		t.Fatalf("owners.json after the claim: %s %v", b, err)
	}

	// With an owner, no code at the next start.
	_ = d.Process().Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	d.spawn()
	d.waitFor(func() bool { return strings.Contains(d.Log(), "clawhost started") }, "the start")
	if strings.Contains(d.Log(), "no owner yet") {
		t.Fatalf("a host with an owner offered a code:\n%s", d.Log())
	}

	var out, errb bytes.Buffer
	if rc := run([]string{"owner-code", "-config", cfg}, &out, &errb); rc != 0 || !regexp.MustCompile(`/owner [A-Z0-9]{8}\n`).MatchString(out.String()) {
		t.Fatalf("clawhost owner-code: exit %d\n%s%s", rc, out.String(), errb.String())
	}
}

// TestContainerAdminEndpoint: the image's admin settings — every address, HTTPS with a
// certificate the host makes at its first start — serve /healthz to `clawhost
// healthcheck` (the image's HEALTHCHECK) and the status to `clawhost status`.
func TestContainerAdminEndpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, port, _ := strings.Cut(sdktest.FreeAddr(t), ":")
	h := loopbackHost(dir, false)
	h.Admin = Attrs{"listen": "0.0.0.0:" + port, "tls_cert": filepath.Join(dir, "data", "admin-tls.crt"), "tls_key": filepath.Join(dir, "data", "admin-tls.key")}
	cfg := h.Write(t)
	d := Launch(t, cfg)
	d.waitFor(func() bool { return strings.Contains(d.Log(), "clawhost started") }, "the start")
	if !strings.Contains(d.Log(), "made a self-signed certificate for the admin endpoint") {
		t.Fatalf("no certificate made:\n%s", d.Log())
	}
	var out, errb bytes.Buffer
	d.waitFor(func() bool {
		out.Reset()
		errb.Reset()
		return run([]string{"healthcheck", "-config", cfg}, &out, &errb) == 0
	}, "clawhost healthcheck to pass")
	if out.Len() != 0 {
		t.Errorf("a healthy healthcheck printed %q", out.String())
	}
	if rc := run([]string{"status", "-config", cfg}, &out, &errb); rc != 0 {
		t.Errorf("clawhost status over the self-signed certificate: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	_ = d.Process().Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	errb.Reset()
	if rc := run([]string{"healthcheck", "-config", cfg}, &out, &errb); rc != 1 {
		t.Errorf("healthcheck of a stopped host: exit %d %s", rc, errb.String())
	}
}
