package admin

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// clusterSnapshot is three hosts on one database as h1 sees them: itself,
// a live h2 polling the Telegram bot, and h3 whose lease expired 20 s ago.
func clusterSnapshot() Snapshot {
	snap := sampleSnapshot()
	snap.Cluster = &Cluster{HostID: "h1", Engine: "postgres",
		Hosts: []ClusterHost{
			{ID: "h1", This: true, Live: true, Admin: "127.0.0.1:8791", Version: "1.2.3", PID: 4000, Epoch: 1,
				Since: t0.Add(-time.Hour), Renewed: t0.Add(-2 * time.Second), Expires: t0.Add(13 * time.Second)},
			{ID: "h2", Live: true, Admin: "10.0.0.2:8791", Version: "1.2.3", PID: 5000, Epoch: 2,
				Since: t0.Add(-30 * time.Minute), Renewed: t0.Add(-4 * time.Second), Expires: t0.Add(11 * time.Second)},
			{ID: "h3" + xss, Version: "1.2.2", PID: 6000, Epoch: 1,
				Since: t0.Add(-2 * time.Hour), Renewed: t0.Add(-35 * time.Second), Expires: t0.Add(-20 * time.Second)},
		},
		Leases: []Lease{
			{Name: "channel/tg", Kind: "channel", Holder: "h2", Live: true, Epoch: 3,
				Acquired: t0.Add(-10 * time.Minute), Renewed: t0.Add(-2 * time.Second), Expires: t0.Add(13 * time.Second)},
			{Name: "session/" + xss, Kind: "session", Holder: "h3", Epoch: 1,
				Acquired: t0.Add(-time.Hour), Renewed: t0.Add(-40 * time.Second), Expires: t0.Add(-25 * time.Second)},
		},
	}
	return snap
}

func TestStatusPageCluster(t *testing.T) {
	t.Parallel()
	s := start(t, Options{Source: &fakeSource{snap: clusterSnapshot()}})
	body, _ := get(t, s, "/")
	for _, want := range []string{
		"hosts live: <b class=\"bad\">2/3</b>",
		"<h2>Hosts</h2>", "this host: <b>h1</b>", "one postgres database",
		// this host, live: renewed, up since, epoch, pid, admin, version
		`<tr class="this"><td>h1 <b>(this host)</b></td><td class="ok">live, expires in 13s</td>`,
		`(1h00m)</td><td class="n">2s ago</td><td class="n">1</td><td class="n">4000</td><td><code>127.0.0.1:8791</code></td><td>1.2.3</td>`,
		`<tr><td>h2</td><td class="ok">live, expires in 11s</td>`,
		// the dead host: the truth, and what it means
		`<td>h3` + xssEscaped + `</td><td class="bad">expired 20s ago — its work is taken over by the other hosts</td>`,
		`<td>—</td><td>1.2.2</td>`,
		// leases, by holder
		"<h2>Leases</h2>",
		`<tr><td>h2</td><td><code>channel/tg</code></td><td class="ok">live, expires in 13s</td><td class="n">2s ago</td>`,
		`<td class="n">3</td></tr>`,
		`<tr><td>h3</td><td><code>session/` + xssEscaped + `</code></td><td class="bad">expired 25s ago</td>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	assertOwnScripts(t, body)
	if i, j := strings.Index(body, "channel/tg"), strings.Index(body, "session/"); i > j {
		t.Error("leases not in the snapshot's order (by holder)")
	}
}

// A host alone (SQLite) has no cluster section; a cluster whose leases
// could not be read says so instead of listing nothing.
func TestStatusPageClusterAbsentOrFailed(t *testing.T) {
	t.Parallel()
	alone := start(t, Options{Source: &fakeSource{snap: sampleSnapshot()}})
	_, body, _ := do(t, alone, request{path: "/"})
	for _, absent := range []string{"<h2>Hosts</h2>", "<h2>Leases</h2>", "hosts live"} {
		if strings.Contains(body, absent) {
			t.Errorf("page of a host alone contains %q", absent)
		}
	}
	_, body, _ = do(t, alone, request{path: "/status.json"})
	if strings.Contains(body, `"cluster"`) {
		t.Errorf("JSON of a host alone has a cluster section:\n%s", body)
	}

	snap := sampleSnapshot()
	snap.Cluster = &Cluster{HostID: "h1", Engine: "postgres", Error: "list leases: connection refused"}
	failed := start(t, Options{Source: &fakeSource{snap: snap}})
	code, body, _ := do(t, failed, request{path: "/"})
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{"<h2>Hosts</h2>", "The leases could not be read", "list leases: connection refused"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "hosts live") || strings.Contains(body, "<h2>Leases</h2>") {
		t.Error("a failed read shows counts or an empty lease table")
	}
}

func TestClusterJSON(t *testing.T) {
	t.Parallel()
	want := clusterSnapshot()
	s := start(t, Options{Source: &fakeSource{snap: want}})
	_, body, _ := do(t, s, request{path: "/status.json"})
	var got Snapshot
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("decode: %v\n%s", err, body)
	}
	if !reflect.DeepEqual(got.Cluster, want.Cluster) {
		t.Errorf("decoded cluster differs:\n got %+v\nwant %+v", got.Cluster, want.Cluster)
	}
	for _, f := range []string{`"cluster": {`, `"host_id": "h1"`, `"engine": "postgres"`, `"this": true`, `"live": false`,
		`"admin": "127.0.0.1:8791"`, `"holder": "h2"`, `"kind": "channel"`, `"epoch": 3`} {
		if !strings.Contains(body, f) {
			t.Errorf("JSON lacks %s", f)
		}
	}
}

func TestLeaseState(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		live    bool
		expires time.Time
		want    string
	}{
		{true, t0.Add(13 * time.Second), "expires in 13s"},
		{true, t0.Add(-time.Second), "expires in 0s"}, // live at the snapshot, a moment before the page
		{false, t0.Add(-20 * time.Second), "expired 20s ago"},
		{false, t0.Add(-90 * time.Minute), "expired 1h30m ago"},
	} {
		if got := LeaseState(c.live, c.expires, t0); got != c.want {
			t.Errorf("LeaseState(%v, %v) = %q, want %q", c.live, t0.Sub(c.expires), got, c.want)
		}
	}
}
