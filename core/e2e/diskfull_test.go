package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestDiskFull: with data_dir on a small tmpfs that fills up, the store
// item is degraded (the journal cannot take a message in): /healthz 503
// naming the store, clawhost status exits 1 with "store: DEGRADED",
// clawhost_store_errors_total counts the failed writes; once space is
// freed, the next message is taken in and the host is healthy again.
// Root only (mount); skipped otherwise.
func TestDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot mount a tmpfs for the data directory")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=24m,mode=0700", "tmpfs", data).CombinedOutput(); err != nil {
		t.Skipf("mount -t tmpfs failed: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", data).Run() }) // after the host stops
	addr := sdktest.FreeAddr(t)
	h := loopbackHost(dir, false)
	h.DataDir, h.Admin = data, Attrs{"listen": addr}
	d := Launch(t, h.Write(t))
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitFor(func() bool { b, err := os.ReadFile(d.addrFile); return err == nil && len(b) > 0 }, "loopback")
	d.waitFor(func() bool { code, _ := get(t, "http://"+addr+"/healthz"); return code == 200 }, "a healthy host")

	filler := filepath.Join(data, "filler")
	if err := FillDisk(filler); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 256<<10) // more WAL pages than the file has
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		postRaw(d, "u1", fmt.Sprintf("m%d %s", i, big))
		if code, body := get(t, "http://"+addr+"/healthz"); code == 503 && strings.Contains(body, `"store"`) && strings.Contains(body, "degraded") {
			break
		}
		if time.Now().After(deadline) {
			_, body := get(t, "http://"+addr+"/healthz")
			t.Fatalf("the store never degraded on a full disk: %s", body)
		}
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"status", "-config", d.ConfigPath()}, &out, &errb); rc != 1 || !strings.Contains(out.String(), "store: DEGRADED") {
		t.Errorf("clawhost status on a full disk: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	_, metrics := get(t, "http://"+addr+"/metrics")
	n := 0.0
	for _, m := range regexp.MustCompile(`(?m)^clawhost_store_errors_total\{[^}]*\} (\S+)$`).FindAllStringSubmatch(metrics, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		n += v
	}
	if n < 1 {
		t.Errorf("clawhost_store_errors_total = %v:\n%s", n, grepLines(metrics, "clawhost_store"))
	}

	// A message the store cannot take is refused at once (the host nacks
	// it; the loopback answers 503 with the host's delay), not held open:
	// the poster keeps it and sends it again.
	const marker = "refused-while-full"
	code, retry := postID(t, d, "u1", "full-1", marker)
	if code != http.StatusServiceUnavailable || retry == "" {
		t.Fatalf("a message posted on a full disk: %d, Retry-After %q; want 503 at once with a delay", code, retry)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	// The poster sends it again after the delay it was given until it is
	// stored; it is answered once.
	for {
		code, retry := postID(t, d, "u1", "full-1", marker)
		if code == http.StatusOK {
			break
		}
		if code != http.StatusServiceUnavailable || time.Now().After(deadline.Add(time.Minute)) {
			t.Fatalf("posting again after space was freed: %d", code)
		}
		n, _ := strconv.Atoi(retry)
		time.Sleep(time.Duration(max(n, 1)) * time.Second) // on purpose: the delay the host asked for
	}
	d.post("u1", "space again")
	answers := 0
	for {
		got := d.nextSendWithin("chat-u1", 2*time.Minute)
		if strings.Contains(got, marker) {
			answers++
		}
		if strings.Contains(got, "space again") {
			break // the session answers in order: anything for the marker came before
		}
	}
	if answers != 1 {
		t.Errorf("the message refused on a full disk was answered %d times, want once", answers)
	}
	d.waitFor(func() bool { code, _ := get(t, "http://"+addr+"/healthz"); return code == 200 }, "the store healthy again")
	var snap struct {
		Store struct{ State string } `json:"store"`
	}
	_, body := get(t, "http://"+addr+"/status.json")
	if err := json.Unmarshal([]byte(body), &snap); err != nil || snap.Store.State != "ok" {
		t.Errorf("status.json store after recovery: %v %s", err, body)
	}
}

// postRaw posts a message to the loopback plugin whatever the answer (a
// full disk makes it fail).
func postRaw(d *daemon, sender, text string) {
	body, _ := json.Marshal(map[string]string{"chat_id": "chat-" + sender, "sender_id": sender, "text": text})
	c := http.Client{Timeout: 20 * time.Second} // a message the store cannot take is refused at once
	resp, err := c.Post("http://"+d.addr()+"/inbound", "application/json", bytes.NewReader(body))
	if err == nil {
		resp.Body.Close()
	}
}

// postID posts a message with the given platform message id to the
// loopback plugin and returns the status and Retry-After; it bounds the
// wait well below the loopback's own minute, so a held request fails.
func postID(t *testing.T, d *daemon, sender, id, text string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"chat_id": "chat-" + sender, "sender_id": sender, "message_id": id, "text": text})
	c := http.Client{Timeout: 20 * time.Second}
	resp, err := c.Post("http://"+d.addr()+"/inbound", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("posting %s: %v", id, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
