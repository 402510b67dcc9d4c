package e2e

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// startAdminHost runs clawhost as host id on the PostgreSQL database url,
// with 2 s leases and its admin endpoint on listen ("" none); mods change
// the host's configuration first.
func startAdminHost(t *testing.T, url, id, listen string, mods ...func(*Host)) *daemon {
	t.Helper()
	dir := t.TempDir()
	h := loopbackHost(dir, false)
	h.Storage = Attrs{"engine": "postgres", "url": url, "host_id": id, "lease_ttl": "2s"}
	h.Admin = Attrs{"listen": listen}
	for _, mod := range mods {
		mod(&h)
	}
	d := Launch(t, h.Write(t))
	d.addrFile = filepath.Join(dir, "lo.addr") // written by the host that holds the channel
	return d
}

// TestHostsStatus: two hosts on one database each show both on their
// status page, in /status.json, in /metrics and in clawhost status; once
// h1 is killed with -9, h2 shows it expired.
func TestHostsStatus(t *testing.T) {
	url := pgtest.Cluster(t).NewDatabase(t)
	listen := map[string]string{"h1": sdktest.FreeAddr(t), "h2": sdktest.FreeAddr(t)}
	hosts := map[string]*daemon{"h1": startAdminHost(t, url, "h1", listen["h1"]), "h2": startAdminHost(t, url, "h2", listen["h2"])}

	// status is host id's /status.json; ok is false while it cannot be read.
	status := func(id string) (admin.Snapshot, bool) {
		cfg, _ := config.Load(hosts[id].cfgPath)
		snap, err := fetchStatus(cfg)
		return snap, err == nil
	}
	// hostsSeen is the hosts id's status lists, by id.
	hostsSeen := func(id string) map[string]admin.ClusterHost {
		snap, ok := status(id)
		if !ok || snap.Cluster == nil {
			return nil
		}
		seen := make(map[string]admin.ClusterHost)
		for _, h := range snap.Cluster.Hosts {
			seen[h.ID] = h
		}
		return seen
	}
	for id, d := range hosts {
		d.waitFor(func() bool { return len(hostsSeen(id)) == 2 }, id+"'s status to list both hosts")
		for other, h := range hostsSeen(id) {
			if !h.Live || h.This != (other == id) || h.Admin != listen[other] || h.PID != hosts[other].cmd.Process.Pid || h.Epoch < 1 || h.Since.IsZero() {
				t.Errorf("%s's status shows %s as %+v", id, other, h)
			}
		}
		_, m := get(t, "http://"+listen[id]+"/metrics")
		for _, want := range []string{`clawhost_host_info{engine="postgres",host_id="` + id + `"} 1`, "clawhost_hosts_live 2", `clawhost_leases_held{kind="host"} 1`} {
			if !strings.Contains(m, want) {
				t.Errorf("%s's /metrics lacks %q", id, want)
			}
		}
		code, page := get(t, "http://"+listen[id]+"/")
		if code != 200 || !strings.Contains(page, "<td>"+id+" <b>(this host)</b></td>") || !strings.Contains(page, "hosts live: <b class=\"ok\">2/2</b>") {
			t.Errorf("%s's status page (%d) lacks the hosts:\n%s", id, code, page)
		}
	}

	_ = hosts["h1"].cmd.Process.Kill()
	_ = hosts["h1"].cmd.Wait()
	hosts["h2"].waitFor(func() bool { h, ok := hostsSeen("h2")["h1"]; return ok && !h.Live }, "h2 to see h1's lease expire")
	// h2 then takes the channel h1 held over: it is "starting" for a moment,
	// when clawhost status rightly exits 1.
	hosts["h2"].waitFor(func() bool {
		snap, ok := status("h2")
		if !ok {
			return false
		}
		for _, p := range snap.Plugins {
			if !p.Ready {
				return false
			}
		}
		return len(snap.Plugins) > 0
	}, "h2 to serve the channel h1 held")
	var out, errb bytes.Buffer
	if rc := run([]string{"status", "-config", hosts["h2"].cfgPath}, &out, &errb); rc != 0 {
		t.Errorf("clawhost status on h2: exit %d, %s", rc, errb.String())
	}
	for _, want := range []string{"hosts live 1/2 (this host h2, sharing one postgres database)", "  h2 (this host) live, expires in", "its work is taken over by the other hosts"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("clawhost status on h2 lacks %q:\n%s", want, out.String())
		}
	}
}
